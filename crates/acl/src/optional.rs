//! [`OptionalAuth`]: the caller of a route that anonymous clients may call too
//! (public files, public pages), when it is signed in.
//!
//! Anonymous means *no credentials were sent*: no `Authorization` header, no
//! `x-api-key` header and no `auth_token` cookie. Credentials that were sent
//! are checked exactly as [`AuthContext`] checks them, so an expired or forged
//! token, an unknown API key or an `Authorization` header of an unknown scheme
//! answer 401; a client never silently falls back to anonymous with a broken
//! credential (and cannot probe tokens against a public route without noticing).

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::{LocalBoxFuture, ready};
use stoa_core::AppError;
use stoa_core::http::headers;

use crate::context::{AuthContext, Credentials};

/// `Some(caller)` when credentials were sent and are valid, `None` when none
/// were sent; any credential that was sent and fails answers its error (401,
/// 422 for a bad organization selection, 503 when the database cannot tell).
#[derive(Clone, Debug)]
pub struct OptionalAuth(pub Option<AuthContext>);

impl OptionalAuth {
    pub fn into_inner(self) -> Option<AuthContext> {
        self.0
    }

    pub fn as_ref(&self) -> Option<&AuthContext> {
        self.0.as_ref()
    }
}

/// Whether the request carries any credential at all, well-formed or not.
fn sends_credentials(req: &HttpRequest, credentials: &Credentials) -> bool {
    !credentials.is_empty()
        || req.headers().contains_key(headers::AUTHORIZATION)
        || req.headers().contains_key(headers::API_KEY)
}

impl FromRequest for OptionalAuth {
    type Error = AppError;
    type Future = LocalBoxFuture<'static, Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let credentials = Credentials::from_request(req);
        if !sends_credentials(req, &credentials) {
            return Box::pin(ready(Ok(Self(None))));
        }
        let ctx = AuthContext::from_request(req, payload);
        Box::pin(async move { ctx.await.map(|ctx| Self(Some(ctx))) })
    }
}
