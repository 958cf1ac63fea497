//! Path-parameter extractor.

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::{Ready, ready};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::issues::{Source, invalid, path_segments};
use super::text::check_path;
use crate::error::AppError;

/// Path parameters: a single value (`Path<Uuid>`), a tuple, or a struct whose
/// field names match the route's `{placeholders}`.
#[derive(Debug)]
pub struct Path<T>(pub T);

super::wrapper!(Path);

impl<T: DeserializeOwned> FromRequest for Path<T> {
    type Error = AppError;
    type Future = Ready<Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        if let Err(err) = check_path(req.match_info().iter()) {
            return ready(Err(err));
        }
        let de = actix_router::PathDeserializer::new(req.match_info());
        let result = serde_path_to_error::deserialize(de)
            .map(Path)
            .map_err(|err| {
                let mut path = path_segments(err.path());
                if path.is_empty() {
                    // A single unnamed value: name it after the route's only placeholder.
                    if let Some((name, _)) = req.match_info().iter().next() {
                        path.push(Value::from(name));
                    }
                }
                invalid(Source::Path, path, &err.into_inner().to_string())
            });
        ready(result)
    }
}
