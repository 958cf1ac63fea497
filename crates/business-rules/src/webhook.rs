//! `CALL_WEBHOOK`: the call runs from the job queue (retried with back-off,
//! at most five attempts), through the guarded outbound client (the address
//! guard is applied again at call time, names included; a total deadline).

use std::time::Duration;

use serde_json::{Value, json};
use stoa_core::outbound::{Outbound, OutboundError};
use stoa_progress::{JobContext, JobError, JobHandler, Outcome};

use futures_util::future::BoxFuture;

use crate::engine::WEBHOOK_JOB;

/// Longest a webhook call may take, connection to last byte.
pub const DEADLINE: Duration = Duration::from_secs(10);
/// Largest response read.
const MAX_RESPONSE: usize = 64 * 1024;

pub struct WebhookJob {
    outbound: Outbound,
}

impl WebhookJob {
    pub fn new(outbound: Outbound) -> Self {
        Self { outbound }
    }
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

async fn call(outbound: &Outbound, payload: &Value) -> Result<u16, OutboundError> {
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
            if let Some(v) = value.as_str() {
                request = request.header(name, v);
            }
        }
    }
    if has_body {
        let body = payload.get("body").cloned().unwrap_or(Value::Null);
        request = request.json(&body);
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
            match call(&self.outbound, ctx.payload()).await {
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
