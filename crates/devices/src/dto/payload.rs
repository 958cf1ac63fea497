//! The push token (a secret that never prints) and the JSON extractor of
//! device bodies (the reference's 400 on a rejected body).

use std::fmt;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use stoa_core::{AppError, Json};
use validator::Validate;

use crate::error::invalid_payload;

/// A push token: a secret that never prints (`Debug` shows `[redacted]`).
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct PushToken(String);

impl PushToken {
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }

    /// The secret itself, for storing it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for PushToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// A JSON device body: like [`Json`], but a rejected body answers the
/// reference's 400 `{error:"Invalid device payload", details, issues}`.
#[derive(Debug)]
pub struct DevicePayload<T>(pub T);

impl<T> DevicePayload<T> {
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T: DeserializeOwned + Validate + 'static> FromRequest for DevicePayload<T> {
    type Error = AppError;
    type Future = LocalBoxFuture<'static, Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let json = Json::<T>::from_request(req, payload);
        Box::pin(async move {
            json.await
                .map(|body| DevicePayload(body.into_inner()))
                .map_err(invalid_payload)
        })
    }
}
