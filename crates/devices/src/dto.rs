//! Request and response bodies, with the reference's limits.
//!
//! Bodies are strict (unknown keys answer 400). Update fields are tri-state:
//! absent keeps the stored value, `null` clears it, a value sets it.

use std::fmt;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use stoa_core::serde_util::double_option;
use stoa_core::{AppError, Json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use validator::{Validate, ValidationError, ValidationErrors};

use crate::error::invalid_payload;
use crate::model::{DeviceItem, Platform};

/// A push token: a secret that never prints (`Debug` shows `[redacted]`).
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct PushToken(String);

impl PushToken {
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }

    /// The secret itself, for storing it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for PushToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// A JSON device body: like [`Json`], but a rejected body answers the
/// reference's 400 `{error:"Invalid device payload", details, issues}`.
#[derive(Debug)]
pub struct DevicePayload<T>(pub T);

impl<T> DevicePayload<T> {
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T: DeserializeOwned + Validate + 'static> FromRequest for DevicePayload<T> {
    type Error = AppError;
    type Future = LocalBoxFuture<'static, Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let json = Json::<T>::from_request(req, payload);
        Box::pin(async move {
            json.await
                .map(|body| DevicePayload(body.into_inner()))
                .map_err(invalid_payload)
        })
    }
}

fn problem(code: &'static str, message: String) -> ValidationError {
    ValidationError::new(code).with_message(message.into())
}

/// Checks a text field's length in characters.
fn check_len(
    errors: &mut ValidationErrors,
    field: &'static str,
    value: Option<&str>,
    min: usize,
    max: usize,
) {
    if let Some(value) = value {
        let len = value.chars().count();
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

/// The optional fields shared by both registration bodies.
fn check_metadata(
    errors: &mut ValidationErrors,
    client_app_version: Option<&str>,
    os_version: Option<&str>,
    locale: Option<&str>,
    push_token: Option<&str>,
    push_provider: Option<&str>,
) {
    check_len(errors, "clientAppVersion", client_app_version, 0, 64);
    check_len(errors, "osVersion", os_version, 0, 64);
    check_len(errors, "locale", locale, 2, 35);
    check_len(errors, "pushToken", push_token, 1, 4096);
    check_len(errors, "pushProvider", push_provider, 1, 32);
}

fn check_device_id(errors: &mut ValidationErrors, device_id: &str) {
    let len = device_id.trim().chars().count();
    if !(1..=255).contains(&len) {
        errors.add(
            "deviceId",
            problem(
                "length",
                "length must be between 1 and 255 characters (after trimming)".into(),
            ),
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

/// `POST /devices`: registers (or refreshes) a device of the caller.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RegisterDevice {
    /// The client's stable id for the device: 1–255 characters, trimmed.
    pub device_id: String,
    pub platform: Platform,
    /// At most 64 characters; `null` clears it, absent keeps it.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub client_app_version: Option<Option<String>>,
    /// At most 64 characters; `null` clears it, absent keeps it.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub os_version: Option<Option<String>>,
    /// 2–35 characters; absent on a new device: the best match of `Accept-Language`.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub locale: Option<Option<String>>,
    /// 1–4096 characters; replaces the stored token when sent (never returned).
    #[schema(value_type = Option<String>)]
    pub push_token: Option<PushToken>,
    /// 1–32 characters (e.g. `fcm`, `apns`); stored with a push token.
    pub push_provider: Option<String>,
}

impl Validate for RegisterDevice {
    fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        check_device_id(&mut errors, &self.device_id);
        check_metadata(
            &mut errors,
            self.client_app_version.as_ref().and_then(|v| v.as_deref()),
            self.os_version.as_ref().and_then(|v| v.as_deref()),
            self.locale.as_ref().and_then(|v| v.as_deref()),
            self.push_token.as_ref().map(PushToken::expose),
            self.push_provider.as_deref(),
        );
        finish(errors)
    }
}

/// `POST /devices/admin/devices`: registers a device for a user of the tenant.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdminRegisterDevice {
    /// The user the device belongs to (live, in the caller's tenant).
    pub user_id: Uuid,
    pub device_id: String,
    pub platform: Platform,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub client_app_version: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub os_version: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub locale: Option<Option<String>>,
    #[schema(value_type = Option<String>)]
    pub push_token: Option<PushToken>,
    pub push_provider: Option<String>,
}

impl Validate for AdminRegisterDevice {
    fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        check_device_id(&mut errors, &self.device_id);
        check_metadata(
            &mut errors,
            self.client_app_version.as_ref().and_then(|v| v.as_deref()),
            self.os_version.as_ref().and_then(|v| v.as_deref()),
            self.locale.as_ref().and_then(|v| v.as_deref()),
            self.push_token.as_ref().map(PushToken::expose),
            self.push_provider.as_deref(),
        );
        finish(errors)
    }
}

impl AdminRegisterDevice {
    /// The target user and the registration itself.
    pub fn split(self) -> (Uuid, RegisterDevice) {
        (
            self.user_id,
            RegisterDevice {
                device_id: self.device_id,
                platform: self.platform,
                client_app_version: self.client_app_version,
                os_version: self.os_version,
                locale: self.locale,
                push_token: self.push_token,
                push_provider: self.push_provider,
            },
        )
    }
}

/// `PUT /devices/{id}`: tri-state metadata changes.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateDevice {
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub client_app_version: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub os_version: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub locale: Option<Option<String>>,
    /// A new token, or `null` when the OS revoked push permission; either way
    /// `push_token_updated_at` becomes now.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub push_token: Option<Option<PushToken>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub push_provider: Option<Option<String>>,
    /// ISO-8601 (RFC 3339); absent means now. `null` is refused: a device
    /// always has a last-seen time.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = String, format = DateTime, required = false)]
    pub last_seen_at: Option<Option<String>>,
}

impl UpdateDevice {
    /// `lastSeenAt`, parsed (validation has checked it).
    pub fn last_seen_at(&self) -> Option<OffsetDateTime> {
        self.last_seen_at
            .as_ref()
            .and_then(|v| v.as_deref())
            .and_then(|raw| OffsetDateTime::parse(raw, &Rfc3339).ok())
    }
}

impl Validate for UpdateDevice {
    fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        check_metadata(
            &mut errors,
            self.client_app_version.as_ref().and_then(|v| v.as_deref()),
            self.os_version.as_ref().and_then(|v| v.as_deref()),
            self.locale.as_ref().and_then(|v| v.as_deref()),
            self.push_token
                .as_ref()
                .and_then(|v| v.as_ref().map(PushToken::expose)),
            self.push_provider.as_ref().and_then(|v| v.as_deref()),
        );
        match &self.last_seen_at {
            Some(None) => errors.add(
                "lastSeenAt",
                problem("invalid_type", "must be a date, not null".into()),
            ),
            Some(Some(raw)) if OffsetDateTime::parse(raw, &Rfc3339).is_err() => errors.add(
                "lastSeenAt",
                problem("invalid_date", "must be an ISO-8601 (RFC 3339) date".into()),
            ),
            _ => {}
        }
        finish(errors)
    }
}

/// How lists are sorted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[schema(as = DeviceSortField)]
#[serde(rename_all = "camelCase")]
pub enum SortField {
    #[default]
    LastSeenAt,
    CreatedAt,
    UpdatedAt,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[schema(as = DeviceSortDir)]
#[serde(rename_all = "lowercase")]
pub enum SortDir {
    Asc,
    #[default]
    Desc,
}

/// `GET /devices` and `GET /devices/admin/devices`.
#[derive(Debug, Default, Deserialize, Validate, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct DeviceListQuery {
    /// Page number, from 1 (default 1).
    pub page: Option<u64>,
    /// 1–100 (default 50).
    pub page_size: Option<u64>,
    pub platform: Option<Platform>,
    /// Admin list: any user of the tenant. Own list: another user only with
    /// `devices.admin` (otherwise nothing matches).
    pub user_id: Option<Uuid>,
    /// `lastSeenAt` (default), `createdAt` or `updatedAt`.
    pub sort_field: Option<SortField>,
    /// `asc` or `desc` (default).
    pub sort_dir: Option<SortDir>,
    /// Comma-separated device ids, at most 200.
    pub ids: Option<String>,
}

/// A page of devices.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceList {
    pub items: Vec<DeviceItem>,
    pub total: u64,
    pub page: u64,
    pub page_size: u64,
    pub total_pages: u64,
    /// True when more devices match than the default count looked at (1,000
    /// past the page's start); `total` is then that bound (`includeTotal=true`
    /// counts exactly).
    pub total_capped: bool,
    /// Send as `cursor` (with the same `sortField`/`sortDir`) for the next
    /// page (absent on the last page).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// One device (admin detail).
#[derive(Debug, Serialize, ToSchema)]
pub struct DeviceDetail {
    pub item: DeviceItem,
}

/// The answer to a registration.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceRegistered {
    pub id: Uuid,
    pub device_id: String,
    /// Whether a deactivated device came back.
    pub revived: bool,
}

/// The answer to an update.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeviceUpdated {
    pub ok: bool,
    pub id: Uuid,
}

/// `{ok: true}`: the device is deactivated.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeviceDeactivated {
    pub ok: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_tokens_never_print() {
        let body: RegisterDevice = serde_json::from_value(serde_json::json!({
            "deviceId": "d", "platform": "ios", "pushToken": "very-secret-token"
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(!format!("{body:?}").contains("very-secret"));
    }

    #[test]
    fn update_fields_are_tri_state() {
        let parse = |v: serde_json::Value| -> UpdateDevice {
            serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
        };
        let absent = parse(serde_json::json!({}));
        assert_eq!(absent.os_version, None);
        let cleared = parse(serde_json::json!({"osVersion": null, "pushToken": null}));
        assert_eq!(cleared.os_version, Some(None));
        assert_eq!(cleared.push_token, Some(None));
        let set = parse(serde_json::json!({"osVersion": "17.1"}));
        assert_eq!(set.os_version, Some(Some("17.1".into())));
        assert!(
            serde_json::from_value::<UpdateDevice>(serde_json::json!({"nope": 1})).is_err(),
            "unknown keys are refused"
        );
    }

    #[test]
    fn validation_names_fields() {
        let body = UpdateDevice {
            locale: Some(Some("x".into())),
            last_seen_at: Some(Some("yesterday".into())),
            ..Default::default()
        };
        let errors = body.validate().err().map(|e| e.field_errors().len());
        assert_eq!(errors, Some(2));
        let ok = UpdateDevice {
            last_seen_at: Some(Some("2026-01-02T03:04:05Z".into())),
            ..Default::default()
        };
        assert!(ok.validate().is_ok());
        assert!(ok.last_seen_at().is_some());
    }
}
