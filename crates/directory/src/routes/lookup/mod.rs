//! Public lookups (no authentication): they reveal only an id, a name and a slug.
//! One handler per file; the rate limit they share is here.

pub mod organization;
pub mod tenant;

use actix_web::{HttpRequest, web};
use stoa_core::AppResult;
use stoa_core::http::{TrustedProxyDepth, client_ip};
use stoa_core::rate_limit::{RateLimiter, Rule};

/// 60 lookups per minute per client address, when a limiter is configured.
const LOOKUP_RULE: Rule = Rule::per_minute(60);

fn limit(req: &HttpRequest, what: &str) -> AppResult<()> {
    let Some(limiter) = req.app_data::<web::Data<dyn RateLimiter>>() else {
        return Ok(());
    };
    let depth = req
        .app_data::<web::Data<TrustedProxyDepth>>()
        .map(|d| *d.get_ref())
        .unwrap_or_default();
    match client_ip(req, depth) {
        Some(ip) => limiter
            .record(&format!("directory:{what}:ip:{ip}"), &LOOKUP_RULE)
            .into_result(),
        None => Ok(()),
    }
}
