//! The registration and update bodies. Update fields are tri-state: absent
//! keeps the stored value, `null` clears it, a value sets it.

use serde::Deserialize;
use stoa_core::serde_util::double_option;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use utoipa::ToSchema;
use uuid::Uuid;
use validator::{Validate, ValidationErrors};

use super::PushToken;
use super::checks::{check_device_id, check_metadata, finish, problem};
use crate::model::Platform;

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
