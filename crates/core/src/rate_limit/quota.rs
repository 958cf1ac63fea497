//! What a client is told about its limits ([`Quota`], the `X-RateLimit-*`
//! headers) and several keys limited together ([`Layers`]).

use std::time::Duration;

use actix_web::HttpResponse;
use actix_web::http::header::{HeaderName, HeaderValue};

use super::{Decision, LIMIT_HEADER, REMAINING_HEADER, RateLimiter, Rule};
use crate::error::AppError;

/// What a client is told about a limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quota {
    pub limit: u32,
    pub remaining: u32,
    /// Set when the request was refused.
    pub retry_after: Option<Duration>,
}

impl Quota {
    pub fn of(decision: Decision, rule: &Rule) -> Self {
        match decision {
            Decision::Allowed { remaining } => Self {
                limit: rule.limit,
                remaining,
                retry_after: None,
            },
            Decision::Limited { retry_after } => Self {
                limit: rule.limit,
                remaining: 0,
                retry_after: Some(retry_after),
            },
        }
    }

    /// The quota to report of two layers: a refusal (the longer wait), else
    /// the one with fewer events left (the smaller limit on a tie).
    pub fn tighter(self, other: Quota) -> Quota {
        match (self.retry_after, other.retry_after) {
            (Some(a), Some(b)) => {
                if b > a {
                    other
                } else {
                    self
                }
            }
            (Some(_), None) => self,
            (None, Some(_)) => other,
            (None, None) => {
                if (other.remaining, other.limit) < (self.remaining, self.limit) {
                    other
                } else {
                    self
                }
            }
        }
    }

    fn header_pairs(&self) -> [(HeaderName, HeaderValue); 2] {
        [
            (
                HeaderName::from_static(LIMIT_HEADER),
                HeaderValue::from(self.limit),
            ),
            (
                HeaderName::from_static(REMAINING_HEADER),
                HeaderValue::from(self.remaining),
            ),
        ]
    }

    /// Adds the quota headers to a response.
    pub fn apply(&self, res: &mut HttpResponse) {
        for (name, value) in self.header_pairs() {
            res.headers_mut().insert(name, value);
        }
    }

    /// Adds the quota headers to an error response.
    pub fn apply_to_error(&self, err: AppError) -> AppError {
        self.header_pairs()
            .into_iter()
            .fold(err, |err, (name, value)| {
                err.with_header(name, value.to_str().unwrap_or("0").to_string())
            })
    }

    /// 429 `{ok:false,error}` with `Retry-After` and the quota headers.
    pub fn too_many_requests(&self) -> AppError {
        let secs = self.retry_after.map_or(1, |d| d.as_secs().max(1));
        self.apply_to_error(AppError::too_many_requests(secs).ok_false())
    }

    /// Puts the quota headers on whatever a handler answered.
    pub fn attach(
        quota: Option<Quota>,
        result: Result<HttpResponse, AppError>,
    ) -> Result<HttpResponse, AppError> {
        let Some(quota) = quota else {
            return result;
        };
        match result {
            Ok(mut res) => {
                quota.apply(&mut res);
                Ok(res)
            }
            Err(err) => Err(quota.apply_to_error(err)),
        }
    }
}

/// Several keys limited together (e.g. per address and per account).
pub struct Layers<'a> {
    limiter: &'a dyn RateLimiter,
    layers: Vec<(String, Rule)>,
}

impl<'a> Layers<'a> {
    pub fn new(limiter: &'a dyn RateLimiter) -> Self {
        Self {
            limiter,
            layers: Vec::new(),
        }
    }

    pub fn layer(mut self, key: impl Into<String>, rule: Rule) -> Self {
        self.layers.push((key.into(), rule));
        self
    }

    /// The quota now, counting nothing.
    pub fn peek(&self) -> Option<Quota> {
        self.layers
            .iter()
            .map(|(key, rule)| Quota::of(self.limiter.check(key, rule), rule))
            .reduce(Quota::tighter)
    }

    /// Counts one event in every layer, atomically per layer. When a layer
    /// refuses, the layers already counted are given back and the refusal is
    /// the error (429 with headers).
    pub fn reserve(&self) -> Result<Option<Quota>, AppError> {
        let mut quota: Option<Quota> = None;
        for (n, (key, rule)) in self.layers.iter().enumerate() {
            let decision = self.limiter.record(key, rule);
            let this = Quota::of(decision, rule);
            if let Decision::Limited { .. } = decision {
                for (key, rule) in &self.layers[..n] {
                    self.limiter.release(key, rule);
                }
                return Err(this.too_many_requests());
            }
            quota = Some(match quota {
                Some(q) => q.tighter(this),
                None => this,
            });
        }
        Ok(quota)
    }

    /// Gives back the event [`Layers::reserve`] counted in every layer.
    pub fn release(&self) {
        for (key, rule) in &self.layers {
            self.limiter.release(key, rule);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate_limit::MemoryRateLimiter;

    #[test]
    fn layers_reserve_all_or_nothing() {
        let rl = MemoryRateLimiter::new(true);
        let wide = Rule::per_minute(10);
        let narrow = Rule::per_minute(1);
        let layers = Layers::new(&rl).layer("wide", wide).layer("narrow", narrow);
        let quota = layers.reserve().ok().flatten();
        assert_eq!(quota.map(|q| (q.limit, q.remaining)), Some((1, 0)));
        assert!(layers.reserve().is_err());
        // The refused attempt did not use up the wide layer.
        assert!(matches!(
            rl.check("wide", &wide),
            Decision::Allowed { remaining: 9 }
        ));
        layers.release();
        assert!(matches!(
            rl.check("wide", &wide),
            Decision::Allowed { remaining: 10 }
        ));
        assert_eq!(layers.peek().map(|q| q.remaining), Some(1));
    }
}
