//! stoa-core's extractors with the assistant's error code: an input the
//! extractor refuses (a body that is no JSON or misses a field, a bad
//! query, a malformed path segment) answers 400 with `code:
//! "validation_error"`, as every other validation error of the `/ai/*`
//! routes does (the reference's AI envelope; the operations table's shape
//! C renders `error` and `issues` beside it).

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use serde::de::DeserializeOwned;
use stoa_core::AppError;
use validator::Validate;

/// The code of an input the assistant refuses.
pub const VALIDATION_ERROR: &str = "validation_error";

/// `err` with `code: "validation_error"` when it is a 400 without a code.
pub fn coded(err: AppError) -> AppError {
    if err.status() == actix_web::http::StatusCode::BAD_REQUEST && err.code().is_none() {
        err.with_code(VALIDATION_ERROR)
    } else {
        err
    }
}

/// [`stoa_core::extract::parse_json`] with the assistant's code.
pub fn parse_json<T: DeserializeOwned + Validate>(bytes: &[u8]) -> Result<T, AppError> {
    stoa_core::extract::parse_json(bytes).map_err(coded)
}

macro_rules! coded_extractor {
    ($name:ident, $inner:path, $($bound:tt)+) => {
        #[doc = concat!("`", stringify!($inner), "` whose refusals carry `code: \"validation_error\"`.")]
        #[derive(Debug)]
        pub struct $name<T>(pub T);

        impl<T> $name<T> {
            pub fn into_inner(self) -> T {
                self.0
            }
        }

        impl<T> std::ops::Deref for $name<T> {
            type Target = T;
            fn deref(&self) -> &T {
                &self.0
            }
        }

        impl<T: $($bound)+> FromRequest for $name<T> {
            type Error = AppError;
            type Future = LocalBoxFuture<'static, Result<Self, AppError>>;

            fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
                let inner = <$inner as FromRequest>::from_request(req, payload);
                Box::pin(async move {
                    inner.await.map(|v| $name(v.into_inner())).map_err(coded)
                })
            }
        }
    };
}

coded_extractor!(
    Json,
    stoa_core::Json<T>,
    DeserializeOwned + Validate + 'static
);
coded_extractor!(
    Query,
    stoa_core::Query<T>,
    DeserializeOwned + Validate + 'static
);
coded_extractor!(Path, stoa_core::Path<T>, DeserializeOwned + 'static);
