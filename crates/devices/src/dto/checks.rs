//! Field checks of the device bodies, with the reference's limits.

use validator::{ValidationError, ValidationErrors};

pub(super) fn problem(code: &'static str, message: String) -> ValidationError {
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
pub(super) fn check_metadata(
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

pub(super) fn check_device_id(errors: &mut ValidationErrors, device_id: &str) {
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

pub(super) fn finish(errors: ValidationErrors) -> Result<(), ValidationErrors> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}
