//! Request and response bodies, with the reference's limits. Unknown keys are
//! ignored (the reference strips them); `cf_*` keys are refused by the
//! extractor. Update fields are tri-state: absent keeps the stored value,
//! `null` clears it, a value sets it.

use serde::{Deserialize, Serialize};
use stoa_core::list::ListPage;
use stoa_core::money::Money;
use stoa_core::serde_util::double_option;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::{Validate, ValidationError, ValidationErrors};

use crate::model::{ProductItem, ProductType};

/// Most ids one bulk request may name (the reference's limit).
pub const MAX_BULK_IDS: usize = 10_000;

fn problem(code: &'static str, message: impl Into<String>) -> ValidationError {
    ValidationError::new(code).with_message(message.into().into())
}

fn check_len(
    errors: &mut ValidationErrors,
    field: &'static str,
    value: Option<&str>,
    min: usize,
    max: usize,
) {
    if let Some(value) = value {
        let len = value.trim().chars().count();
        if len < min || len > max {
            errors.add(
                field,
                problem(
                    "length",
                    format!("length must be between {min} and {max} characters"),
                ),
            );
        }
    }
}

/// `^[A-Za-z0-9._-]{1,191}$`, as the reference.
fn check_sku(errors: &mut ValidationErrors, sku: Option<&str>) {
    if let Some(sku) = sku {
        let ok = (1..=191).contains(&sku.len())
            && sku
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if !ok {
            errors.add(
                "sku",
                problem(
                    "invalid_string",
                    "SKU may only contain letters, digits, '.', '_' and '-' (at most 191)",
                ),
            );
        }
    }
}

/// Lower-cased `^[a-z0-9_-]{1,150}$`, as the reference.
fn check_handle(errors: &mut ValidationErrors, handle: Option<&str>) {
    if let Some(handle) = handle {
        let ok = (1..=150).contains(&handle.len())
            && handle.bytes().all(|b| {
                b.is_ascii_lowercase()
                    || b.is_ascii_uppercase()
                    || b.is_ascii_digit()
                    || b == b'_'
                    || b == b'-'
            });
        if !ok {
            errors.add(
                "handle",
                problem(
                    "invalid_string",
                    "Handle may only contain letters, digits, '_' and '-' (at most 150)",
                ),
            );
        }
    }
}

fn check_price(errors: &mut ValidationErrors, amount: Option<&Money>, currency: Option<&str>) {
    if amount.is_some_and(|a| *a < Money::ZERO) {
        errors.add("priceAmount", problem("too_small", "must not be negative"));
    }
    if let Some(currency) = currency
        && !(currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_alphabetic()))
    {
        errors.add(
            "priceCurrency",
            problem("invalid_string", "must be a three-letter ISO 4217 code"),
        );
    }
}

fn finish(errors: ValidationErrors) -> Result<(), ValidationErrors> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// `POST /catalog/products`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateProduct {
    /// 1–255 characters (trimmed).
    pub title: String,
    /// At most 255 characters.
    pub subtitle: Option<String>,
    /// At most 4,000 characters.
    pub description: Option<String>,
    /// Letters, digits, `.`, `_`, `-`; at most 191; unique in the tenant (409).
    pub sku: Option<String>,
    /// Letters, digits, `_`, `-` (stored lower-cased); at most 150; unique in the tenant (409).
    pub handle: Option<String>,
    /// Default `simple`.
    pub product_type: Option<ProductType>,
    /// Default `true`.
    pub is_active: Option<bool>,
    /// An exact decimal string (`"19.99"`), at least 0; needs `priceCurrency`.
    pub price_amount: Option<Money>,
    /// ISO 4217 code (`EUR`; stored upper-cased).
    pub price_currency: Option<String>,
    /// The organization the product belongs to: default the selected (else
    /// the home) organization; must be inside the caller's organizations.
    pub organization_id: Option<Uuid>,
}

impl Validate for CreateProduct {
    fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        check_len(&mut errors, "title", Some(&self.title), 1, 255);
        check_len(&mut errors, "subtitle", self.subtitle.as_deref(), 0, 255);
        check_len(
            &mut errors,
            "description",
            self.description.as_deref(),
            0,
            4000,
        );
        check_sku(&mut errors, self.sku.as_deref());
        check_handle(&mut errors, self.handle.as_deref());
        check_price(
            &mut errors,
            self.price_amount.as_ref(),
            self.price_currency.as_deref(),
        );
        if self.price_amount.is_some() && self.price_currency.is_none() {
            errors.add(
                "priceCurrency",
                problem("invalid_type", "Required with priceAmount"),
            );
        }
        finish(errors)
    }
}

/// `PUT /catalog/products/{id}` (and `PUT /catalog/products {id, ...}`).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateProduct {
    pub title: Option<String>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub subtitle: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub description: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub sku: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub handle: Option<Option<String>>,
    pub product_type: Option<ProductType>,
    pub is_active: Option<bool>,
    /// `null` clears the price.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<Money>)]
    pub price_amount: Option<Option<Money>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub price_currency: Option<Option<String>>,
    /// Moves the product to another organization (both inside the caller's).
    pub organization_id: Option<Uuid>,
}

impl Validate for UpdateProduct {
    fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        check_len(&mut errors, "title", self.title.as_deref(), 1, 255);
        let inner =
            |v: &Option<Option<String>>| v.as_ref().and_then(|s| s.as_deref().map(str::to_owned));
        check_len(
            &mut errors,
            "subtitle",
            inner(&self.subtitle).as_deref(),
            0,
            255,
        );
        check_len(
            &mut errors,
            "description",
            inner(&self.description).as_deref(),
            0,
            4000,
        );
        check_sku(&mut errors, inner(&self.sku).as_deref());
        check_handle(&mut errors, inner(&self.handle).as_deref());
        check_price(
            &mut errors,
            self.price_amount.as_ref().and_then(Option::as_ref),
            inner(&self.price_currency).as_deref(),
        );
        finish(errors)
    }
}

/// How lists are sorted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[schema(as = ProductSortField)]
#[serde(rename_all = "camelCase")]
pub enum SortField {
    Title,
    Sku,
    #[default]
    CreatedAt,
    UpdatedAt,
}

pub use stoa_core::list::SortDir;

/// `GET /catalog/products`.
#[derive(Debug, Default, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ProductListQuery {
    /// Page number, from 1 (default 1).
    pub page: Option<u64>,
    /// 1–100 (default 50).
    pub page_size: Option<u64>,
    /// Only this product.
    pub id: Option<Uuid>,
    /// Part of the title, SKU or handle (case-insensitive).
    #[validate(length(max = 200))]
    pub search: Option<String>,
    pub is_active: Option<bool>,
    #[param(inline)]
    pub product_type: Option<ProductType>,
    /// ISO 4217 code of the price.
    #[validate(length(equal = 3))]
    pub price_currency: Option<String>,
    /// Only products of this organization (inside the caller's).
    pub organization_id: Option<Uuid>,
    /// `title`, `sku`, `createdAt` (default) or `updatedAt`.
    #[param(inline)]
    pub sort_field: Option<SortField>,
    /// `asc` or `desc` (default: `asc` for title and SKU, `desc` for times).
    #[param(inline)]
    pub sort_dir: Option<SortDir>,
}

/// A page of products.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProductList {
    /// `{items, total, page, pageSize, totalPages, totalCapped, nextCursor}`.
    #[serde(flatten)]
    #[schema(inline)]
    pub page: ListPage<ProductItem>,
}

/// `GET /catalog/products/{id}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProductDetail {
    pub item: ProductItem,
}

/// The answer to a create.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProductCreated {
    pub id: Uuid,
}

/// `{ok: true}`: updated or deleted.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProductOk {
    pub ok: bool,
}

/// What the bulk delete was started from (kept in the job's meta).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum BulkScope {
    Selected,
    Filtered,
}

impl BulkScope {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Selected => "selected",
            Self::Filtered => "filtered",
        }
    }
}

/// `POST /catalog/bulk-delete`: all three keys required.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulkDelete {
    /// Must be `true`: the explicit confirmation of the delete.
    pub confirm: bool,
    /// 1–10,000 product ids; duplicates are dropped.
    pub ids: Vec<Uuid>,
    pub scope: BulkScope,
}

impl Validate for BulkDelete {
    fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        if !self.confirm {
            errors.add(
                "confirm",
                problem("invalid_literal", "Invalid input: expected true"),
            );
        }
        if self.ids.is_empty() || self.ids.len() > MAX_BULK_IDS {
            errors.add(
                "ids",
                problem(
                    "length",
                    format!("between 1 and {MAX_BULK_IDS} ids are required"),
                ),
            );
        }
        finish(errors)
    }
}

// The reference's envelope.
/// The answer to `POST /catalog/bulk-delete`: the queued job to follow.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulkDeleteStarted {
    pub ok: bool,
    /// Poll `GET /progress/jobs/{progressJobId}` (`null` where the program
    /// keeps no job records).
    pub progress_job_id: Option<Uuid>,
    pub message: String,
}
