//! Test-only routes that exercise the extractors.

use actix_web::{HttpResponse, web};
use serde::Deserialize;
use stoa_core::http::ServiceConfig;
use stoa_core::{Form, Json, PageQuery, Path, Query};
use uuid::Uuid;
use validator::Validate;

#[derive(Deserialize, Validate)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Payload {
    #[validate(length(min = 1, max = 10))]
    pub name: String,
    pub count: u32,
    pub kind: Kind,
    #[validate(nested)]
    pub items: Option<Vec<Item>>,
}

#[derive(Deserialize, Validate)]
pub struct Item {
    #[validate(range(min = 1, max = 5))]
    pub qty: u8,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Ios,
    Android,
}

#[derive(Deserialize, Validate)]
pub struct Login {
    #[validate(email)]
    pub email: String,
    pub remember: Option<bool>,
}

#[derive(Deserialize, Validate)]
#[serde(rename_all = "camelCase")]
pub struct ListQuery {
    pub page: Option<u64>,
    pub page_size: Option<u64>,
    pub role_ids: Option<Vec<Uuid>>,
}

#[derive(Deserialize, Validate)]
#[serde(rename_all = "camelCase")]
pub struct SearchQuery {
    #[validate(length(min = 1, max = 5))]
    pub term: String,
    pub limit: u32,
    pub from_id: Option<Uuid>,
    #[validate(range(max = 10))]
    pub depth: Option<u8>,
}

async fn search(q: Query<SearchQuery>) -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"term": q.term, "limit": q.limit, "fromId": q.from_id, "depth": q.depth}))
}

async fn echo(body: Json<Payload>) -> HttpResponse {
    let kind = match body.kind {
        Kind::Ios => "ios",
        Kind::Android => "android",
    };
    HttpResponse::Ok()
        .json(serde_json::json!({"name": body.name, "count": body.count, "kind": kind}))
}

async fn by_id(id: Path<Uuid>) -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"id": id.into_inner()}))
}

async fn list(q: Query<ListQuery>) -> Result<HttpResponse, stoa_core::AppError> {
    let page = PageQuery {
        page: q.page,
        page_size: q.page_size,
    }
    .resolve(50, 200)?;
    Ok(HttpResponse::Ok().json(serde_json::json!({
        "page": page.page, "pageSize": page.page_size, "offset": page.offset(),
        "roleIds": q.role_ids.clone().unwrap_or_default(),
    })))
}

async fn login(form: Form<Login>) -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"email": form.email, "remember": form.remember}))
}

async fn boom() -> HttpResponse {
    panic!("deliberate panic in a handler");
}

/// A collection-style delete (`?id=` or a body `{id}`).
async fn collection_delete(id: stoa_core::collection::CollectionId) -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"id": id.raw()}))
}

#[derive(Deserialize, Validate)]
pub struct Note {
    pub note: String,
}

/// A collection-style update: the id and the rest of the body.
async fn collection_update(body: stoa_core::collection::WithId<Json<Note>>) -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"id": body.id.raw(), "len": body.body.note.len()}))
}

/// A handler that reads the raw body.
async fn raw(body: web::Bytes) -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"len": body.len()}))
}

pub fn configure(cfg: &mut ServiceConfig) {
    cfg.route("/test/collection", web::delete().to(collection_delete))
        .route("/test/collection", web::put().to(collection_update))
        .route("/test/raw", web::post().to(raw))
        .route("/test/echo", web::post().to(echo))
        .route("/test/items/{id}", web::get().to(by_id))
        .route("/test/list", web::get().to(list))
        .route("/test/search", web::get().to(search))
        .route("/test/login", web::post().to(login))
        .route("/test/boom", web::get().to(boom));
}
