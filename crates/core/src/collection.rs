//! Collection-style writes.
//!
//! Open Mercato clients update and delete a record at its collection path, with
//! the id in the body (`PUT /things {id, ...}`) or the query
//! (`DELETE /things?id=`), where stoa's own routes put it in the path
//! (`PUT /things/{id}`). These extractors take the id out of the request so
//! that one handler body serves both forms: the path handler and the
//! collection handler call the same function with the id they found.

use actix_web::dev::Payload;
use actix_web::web::Bytes;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::error::AppError;
use crate::extract::body::{limit_for, read_body};

// Declared for the OpenAPI document; `CollectionId` reads it.
/// The body a collection-style delete may carry instead of `?id=`.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
#[schema(as = CollectionIdBody)]
pub struct IdBody {
    pub id: Uuid,
}

/// The `id` of a collection-style request, as sent (not yet parsed, so each
/// module keeps its own "invalid id" answer): `?id=` first, else a JSON body's
/// `id`. `None` when neither has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionId(pub Option<String>);

impl CollectionId {
    /// The id as a uuid; 400 `Invalid query parameters: id: a uuid is required`
    /// when it is missing or malformed.
    pub fn uuid(&self) -> Result<Uuid, AppError> {
        parse_uuid(self.0.as_deref())
    }

    /// The raw id, `""` when none was sent (modules that answer a malformed id
    /// with their own message parse this).
    pub fn raw(&self) -> &str {
        self.0.as_deref().unwrap_or("")
    }
}

/// The standard answer to a missing or malformed collection id.
pub fn parse_uuid(raw: Option<&str>) -> Result<Uuid, AppError> {
    raw.map(str::trim)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| {
            let message = if raw.is_some_and(|s| !s.trim().is_empty()) {
                "Invalid uuid"
            } else {
                "Required"
            };
            AppError::bad_request("Invalid query parameters: id: a uuid is required").with_issues(
                vec![crate::error::Issue {
                    path: vec!["id".into()],
                    message: message.into(),
                    code: "invalid_string".into(),
                }],
            )
        })
}

fn query_id(req: &HttpRequest) -> Option<String> {
    serde_html_form::from_str::<Vec<(String, String)>>(req.query_string())
        .ok()?
        .into_iter()
        .find(|(k, _)| k == "id")
        .map(|(_, v)| v)
}

/// A JSON value's id: a string as is, a number as its text.
fn id_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl FromRequest for CollectionId {
    type Error = AppError;
    type Future = LocalBoxFuture<'static, Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let from_query = query_id(&req);
        let mut payload = payload.take();
        Box::pin(async move {
            if from_query.is_some() {
                return Ok(Self(from_query));
            }
            // `STOA_BODY_LIMIT`, like every other body (413 past it); a body
            // that is not a JSON object simply carries no id.
            let bytes = read_body(&req, &mut payload, limit_for(&req)).await?;
            let id = serde_json::from_slice::<Map<String, Value>>(&bytes)
                .ok()
                .and_then(|mut map| map.remove("id"))
                .as_ref()
                .and_then(id_text);
            Ok(Self(id))
        })
    }
}

/// A collection-style update: the record's `id` (from the JSON body, else
/// `?id=`) and the rest of the body, extracted by `E` exactly as the path form
/// extracts it (same validation, same error answers). `E` never sees `id`, so
/// bodies that refuse unknown fields keep refusing everything else.
#[derive(Debug)]
pub struct WithId<E> {
    pub id: CollectionId,
    pub body: E,
}

impl<E: FromRequest + 'static> FromRequest for WithId<E>
where
    E::Error: Into<actix_web::Error>,
{
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<Self, actix_web::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let from_query = query_id(&req);
        let mut payload = payload.take();
        Box::pin(async move {
            let bytes = read_body(&req, &mut payload, limit_for(&req))
                .await
                .map_err(actix_web::Error::from)?;
            let (id, rest) = match serde_json::from_slice::<Value>(&bytes) {
                Ok(Value::Object(mut map)) => {
                    let id = map.remove("id").as_ref().and_then(id_text);
                    let rest = serde_json::to_vec(&Value::Object(map))
                        .map(Bytes::from)
                        .unwrap_or(bytes);
                    (id, rest)
                }
                // Not an object: `E` reports what is wrong with it.
                _ => (None, bytes),
            };
            let mut rest: Payload = Payload::from(rest);
            let inner = E::from_request(&req, &mut rest).await.map_err(Into::into)?;
            Ok(Self {
                id: CollectionId(id.or(from_query)),
                body: inner,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_must_be_uuids() {
        let id = Uuid::from_u128(42);
        assert_eq!(CollectionId(Some(format!(" {id} "))).uuid().ok(), Some(id));
        assert!(CollectionId(None).uuid().is_err());
        assert!(CollectionId(Some("nope".into())).uuid().is_err());
        assert_eq!(CollectionId(None).raw(), "");
    }

    #[test]
    fn numbers_and_strings_are_ids_objects_are_not() {
        assert_eq!(id_text(&Value::from("a")), Some("a".into()));
        assert_eq!(id_text(&Value::from(7)), Some("7".into()));
        assert_eq!(id_text(&Value::Null), None);
    }
}
