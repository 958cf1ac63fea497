//! Rows of `catalog_products`, what the API shows of them, and the state
//! undo and redo write back.

use diesel::prelude::*;
use serde::{Deserialize, Serialize};
use stoa_core::money::Money;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::schema::catalog_products;

// The reference's product types.
/// The kind of product.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProductType {
    #[default]
    Simple,
    Configurable,
    Virtual,
    Downloadable,
    Bundle,
    Grouped,
}

impl ProductType {
    pub const ALL: [Self; 6] = [
        Self::Simple,
        Self::Configurable,
        Self::Virtual,
        Self::Downloadable,
        Self::Bundle,
        Self::Grouped,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Simple => "simple",
            Self::Configurable => "configurable",
            Self::Virtual => "virtual",
            Self::Downloadable => "downloadable",
            Self::Bundle => "bundle",
            Self::Grouped => "grouped",
        }
    }
}

/// One product, as stored.
#[derive(Clone, Debug, PartialEq, Queryable, Selectable)]
#[diesel(table_name = catalog_products)]
#[diesel(check_for_backend(diesel::pg::Pg))]
pub struct ProductRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub title: String,
    pub subtitle: Option<String>,
    pub description: Option<String>,
    pub sku: Option<String>,
    pub handle: Option<String>,
    pub product_type: String,
    pub is_active: bool,
    pub price_amount: Option<Money>,
    pub price_currency: Option<String>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

// snake_case keys, as the reference's list rows.
/// A product as the API shows it (snake_case keys; the price amount is an
/// exact decimal string).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ProductItem {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub title: String,
    pub subtitle: Option<String>,
    pub description: Option<String>,
    pub sku: Option<String>,
    pub handle: Option<String>,
    /// `simple`, `configurable`, `virtual`, `downloadable`, `bundle` or `grouped`.
    pub product_type: String,
    pub is_active: bool,
    pub price_amount: Option<Money>,
    /// ISO 4217 code (three capital letters).
    pub price_currency: Option<String>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Send it back in `x-om-ext-optimistic-lock-expected-updated-at` to
    /// refuse an update over someone else's change.
    #[serde(with = "stoa_core::serde_util::timestamp")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl From<ProductRow> for ProductItem {
    fn from(row: ProductRow) -> Self {
        Self {
            id: row.id,
            tenant_id: row.tenant_id,
            organization_id: row.organization_id,
            title: row.title,
            subtitle: row.subtitle,
            description: row.description,
            sku: row.sku,
            handle: row.handle,
            product_type: row.product_type,
            is_active: row.is_active,
            price_amount: row.price_amount,
            price_currency: row.price_currency,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

/// What undo and redo put back: a product's whole state
/// (`stoa_core::command::Tracked`, implemented in [`crate::commands`]).
///
/// Equality ignores `updated_at`: every write stamps it anew (the table's
/// trigger), so a state written back is the same product with a new time.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProductState {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub title: String,
    pub subtitle: Option<String>,
    pub description: Option<String>,
    pub sku: Option<String>,
    pub handle: Option<String>,
    pub product_type: String,
    pub is_active: bool,
    pub price_amount: Option<Money>,
    pub price_currency: Option<String>,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    pub created_at: OffsetDateTime,
    #[serde(with = "stoa_core::serde_util::timestamp")]
    pub updated_at: OffsetDateTime,
}

impl PartialEq for ProductState {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.tenant_id == other.tenant_id
            && self.organization_id == other.organization_id
            && self.title == other.title
            && self.subtitle == other.subtitle
            && self.description == other.description
            && self.sku == other.sku
            && self.handle == other.handle
            && self.product_type == other.product_type
            && self.is_active == other.is_active
            && self.price_amount == other.price_amount
            && self.price_currency == other.price_currency
            && self.created_at == other.created_at
    }
}

impl From<&ProductRow> for ProductState {
    fn from(row: &ProductRow) -> Self {
        Self {
            id: row.id,
            tenant_id: row.tenant_id,
            organization_id: row.organization_id,
            title: row.title.clone(),
            subtitle: row.subtitle.clone(),
            description: row.description.clone(),
            sku: row.sku.clone(),
            handle: row.handle.clone(),
            product_type: row.product_type.clone(),
            is_active: row.is_active,
            price_amount: row.price_amount,
            price_currency: row.price_currency.clone(),
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}
