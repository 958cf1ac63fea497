//! One handler per file: extract, check the gate, call the service, answer.

pub mod status;
pub mod submit;
pub mod verify;

use actix_web::web;

use crate::error::OnboardingError;
use crate::state::OnboardingState;

/// The module state registered as app data.
pub type State = web::Data<OnboardingState>;

/// The cookie naming the workspace a browser verified (read by the status
/// page; not a credential).
pub const LOGIN_TENANT_COOKIE: &str = "om_login_tenant";

/// 404 `{ok:false, error}` unless onboarding is enabled.
pub fn gate(state: &OnboardingState) -> Result<(), OnboardingError> {
    if state.config.enabled {
        Ok(())
    } else {
        Err(OnboardingError::Disabled)
    }
}
