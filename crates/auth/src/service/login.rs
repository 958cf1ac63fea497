//! Password checks of a sign-in.

use stoa_core::AppResult;

use crate::password::verify_password;
use crate::queries::UserRow;

/// The candidates the password opens. Every candidate costs one verification
/// on the hashing pool, run side by side; no candidate still costs one (against
/// a dummy hash), so unknown accounts answer as slowly as known ones.
pub async fn matching_accounts(
    candidates: Vec<UserRow>,
    password: String,
) -> AppResult<Vec<UserRow>> {
    if candidates.is_empty() {
        verify_password(password, None).await?;
        return Ok(Vec::new());
    }
    let checks = candidates
        .iter()
        .map(|user| verify_password(password.clone(), user.password_hash.clone()));
    let results = futures_util::future::try_join_all(checks).await?;
    Ok(candidates
        .into_iter()
        .zip(results)
        .filter_map(|(user, valid)| valid.then_some(user))
        .collect())
}
