//! Webhook secrets: each rule whose actions call webhooks (`CALL_WEBHOOK`)
//! signs them with a secret of its own ([`WebhookSigner`], the Standard
//! Webhooks scheme of `stoa_core::outbound::signing`).
//!
//! - A secret is made when a rule gets its first `CALL_WEBHOOK` action (at
//!   create, or at an update that adds one) and by the rotate endpoint; the
//!   answer of that request shows it, once. No read shows it again.
//! - It is stored encrypted with the server's [`KeyRing`] in
//!   `business_rules.webhook_secret`, bound to the rule ([`binding`]: the
//!   tenant and the rule's uuid), so a ciphertext copied to another rule or
//!   tenant does not decrypt.
//! - It is not part of the rule's tracked state ([`crate::model::RuleState`]
//!   does not select the column): the action log's snapshots and undo
//!   payloads never hold it, and undo or redo of a rule write never brings an
//!   earlier secret back.
//! - The webhook job ([`crate::webhook`]) reads and decrypts it when it
//!   calls; the job's payload holds the rule's id, never the secret.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::AppError;
use stoa_core::crypto::{Binding, KeyRing};
use stoa_core::outbound::signing::WebhookSigner;
use uuid::Uuid;

use crate::schema::business_rules as r;

/// What a rule's webhook secret is bound to.
pub const PURPOSE: &str = "business_rules.webhook_secret";

/// The binding of the secret of rule `record` (its uuid) of `tenant`.
pub fn binding(tenant: Uuid, record: &str) -> Binding<'_> {
    Binding {
        purpose: PURPOSE,
        tenant,
        record,
    }
}

/// A new secret for rule `rule` of `tenant`: `(shown once, stored)`.
pub fn generate(keys: &KeyRing, tenant: Uuid, rule: Uuid) -> Result<(String, String), AppError> {
    let secret = WebhookSigner::generate_secret().map_err(AppError::internal)?;
    let record = rule.to_string();
    let stored = keys
        .encrypt(&secret, &binding(tenant, &record))
        .map_err(AppError::internal)?;
    Ok((secret, stored))
}

/// Whether rule `rule` of `tenant` has a secret (read in the writing
/// transaction, after the rule's row was locked).
pub async fn has_secret(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    rule: Uuid,
) -> Result<bool, AppError> {
    let stored: Option<Option<String>> = r::table
        .find(rule)
        .filter(r::tenant_id.eq(tenant))
        .select(r::webhook_secret)
        .first(conn)
        .await
        .optional()?;
    Ok(stored.flatten().is_some())
}

/// Stores `stored` (from [`generate`]) as the secret of rule `rule` of
/// `tenant`, replacing any earlier one.
pub async fn store(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    rule: Uuid,
    stored: &str,
) -> Result<(), AppError> {
    diesel::update(r::table.find(rule).filter(r::tenant_id.eq(tenant)))
        .set(r::webhook_secret.eq(stored))
        .execute(conn)
        .await?;
    Ok(())
}

/// The signer of rule `rule` of `tenant`, if it has a secret (rules saved
/// before secrets existed have none until one is rotated in). A secret that
/// does not decrypt (a key missing from `STOA_ENCRYPTION_KEYS`, a damaged
/// value) is an error: the webhook is never sent unsigned instead.
pub async fn signer(
    conn: &mut AsyncPgConnection,
    keys: &KeyRing,
    tenant: Uuid,
    rule: Uuid,
) -> Result<Option<WebhookSigner>, SecretError> {
    let stored: Option<Option<String>> = r::table
        .find(rule)
        .filter(r::tenant_id.eq(tenant))
        .select(r::webhook_secret)
        .first(conn)
        .await
        .optional()
        .map_err(|e| SecretError::Db(e.to_string()))?;
    let Some(stored) = stored.flatten() else {
        return Ok(None);
    };
    let record = rule.to_string();
    let secret = keys
        .decrypt(&stored, &binding(tenant, &record))
        .map_err(|e| SecretError::Crypto(e.to_string()))?;
    Ok(Some(WebhookSigner::new(&secret)))
}

/// Why a rule's signer could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// A passing database failure (retried).
    #[error("reading the rule's webhook secret: {0}")]
    Db(String),
    /// The stored secret does not decrypt (retrying cannot help).
    #[error("the rule's webhook secret does not decrypt: {0}")]
    Crypto(String),
}
