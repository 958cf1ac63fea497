//! `CALL_WEBHOOK`: the call runs from the job queue (retried with back-off,
//! at most five attempts), through the guarded outbound client (the address
//! guard is applied again at call time, names included; a total deadline).
//! Each request is signed with the rule's secret ([`crate::secrets`]) in the
//! Standard Webhooks scheme (`webhook-id`: the job's id, the same on every
//! retry; `webhook-timestamp`; `webhook-signature`), read and decrypted when
//! the call is made (the job's payload names the rule, never the secret).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use stoa_core::crypto::KeyRing;
use stoa_core::outbound::{Outbound, OutboundError, WebhookSigner};
use stoa_jobs::{JobContext, JobError, JobHandler, Outcome};

use futures_util::future::BoxFuture;

use crate::engine::WEBHOOK_JOB;
use crate::secrets::{self, SecretError};

/// Longest a webhook call may take, connection to last byte.
pub const DEADLINE: Duration = Duration::from_secs(10);
/// Largest response read.
const MAX_RESPONSE: usize = 64 * 1024;

pub struct WebhookJob {
    outbound: Outbound,
    keys: Arc<KeyRing>,
}

impl WebhookJob {
    /// `keys` decrypts the rules' webhook secrets (`Services::keys`).
    pub fn new(outbound: Outbound, keys: Arc<KeyRing>) -> Self {
        Self { outbound, keys }
    }
}

/// The signing-header names a rule's own `headers` may not set (the
/// signature's would be sent twice).
fn is_signature_header(name: &str) -> bool {
    name.get(..8)
        .is_some_and(|p| p.eq_ignore_ascii_case("webhook-"))
}

/// Checks a webhook URL at save time: a well-formed http(s) URL whose literal
/// address the guard accepts (loopback, private and metadata addresses are
/// refused unless the operator allowed them). Names are checked at call time.
pub fn check_url(outbound: &Outbound, url: &str) -> Result<(), String> {
    outbound
        .guarded()
        .post(url)
        .map(|_| ())
        .map_err(|e| match e {
            OutboundError::Blocked(b) => format!("address not allowed: {b}"),
            other => other.to_string(),
        })
}

/// The signer of the job's rule (`rule` and `tenantId` of the payload);
/// `None` when the rule has no secret (saved before secrets existed), or
/// the job names no rule (queued before).
async fn signer_of(ctx: &JobContext, keys: &KeyRing) -> Result<Option<WebhookSigner>, SecretError> {
    let id = |key: &str| {
        ctx.payload()
            .get(key)
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<uuid::Uuid>().ok())
    };
    let (Some(rule), Some(tenant)) = (id("rule"), id("tenantId")) else {
        return Ok(None);
    };
    let mut conn = ctx
        .db
        .conn()
        .await
        .map_err(|e| SecretError::Db(e.to_string()))?;
    secrets::signer(&mut conn, keys, tenant, rule).await
}

async fn call(
    outbound: &Outbound,
    payload: &Value,
    signature: Option<(&WebhookSigner, String)>,
) -> Result<u16, OutboundError> {
    let url = payload
        .get("url")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let method = payload
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or("POST");
    let method = reqwest::Method::from_bytes(method.as_bytes())
        .map_err(|e| OutboundError::InvalidUrl(e.to_string()))?;
    let has_body = !matches!(method, reqwest::Method::GET | reqwest::Method::DELETE);
    let mut request = outbound
        .guarded()
        .request(method, url)?
        .deadline(DEADLINE)
        .max_response_bytes(MAX_RESPONSE);
    if let Some(headers) = payload.get("headers").and_then(Value::as_object) {
        for (name, value) in headers {
            if let Some(v) = value.as_str()
                && !(signature.is_some() && is_signature_header(name))
            {
                request = request.header(name, v);
            }
        }
    }
    if has_body {
        let body = payload.get("body").cloned().unwrap_or(Value::Null);
        request = request.json(&body);
    }
    if let Some((signer, id)) = signature {
        request = request.sign_webhook(signer, id);
    }
    let response = request.send().await?;
    Ok(response.status)
}

impl JobHandler for WebhookJob {
    fn kind(&self) -> &'static str {
        WEBHOOK_JOB
    }

    fn run<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<Outcome, JobError>> {
        Box::pin(async move {
            let signer = match signer_of(ctx, &self.keys).await {
                Ok(signer) => signer,
                Err(e @ SecretError::Db(_)) => return Err(JobError::retry(e)),
                Err(e @ SecretError::Crypto(_)) => return Err(JobError::fatal(e)),
            };
            // The delivery id is the job's: the same on every retry (the
            // receiver's idempotency key).
            let delivery = format!("msg_{}", ctx.job.id.simple());
            let signature = signer.as_ref().map(|s| (s, delivery));
            match call(&self.outbound, ctx.payload(), signature).await {
                Ok(status) if (200..300).contains(&status) => {
                    Ok(Outcome::Completed(Some(json!({"status": status}))))
                }
                Ok(status) => Err(JobError::retry(format!("webhook answered {status}"))),
                Err(OutboundError::Blocked(b)) => {
                    Err(JobError::fatal(format!("address not allowed: {b}")))
                }
                Err(OutboundError::InvalidUrl(e)) => Err(JobError::fatal(e)),
                Err(e) => Err(JobError::retry(e)),
            }
        })
    }
}
