//! Shared helpers: an app with auth, directory and attachments mounted over
//! a storage the test can inspect; seeding; uploads.

use std::sync::Arc;

use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::web;
use serde_json::Value;
use stoa_acl::Registry;
use stoa_attachments::AttachmentsConfig;
use stoa_attachments::images::Renderer;
use stoa_core::db::Db;
use stoa_core::storage::Storage;
use stoa_testkit::{AppService, Multipart, TestApp, TestResponse};

pub use stoa_auth::testing::{Tenant, organization, token_for, user_with_features};
pub use stoa_testkit::requests::{bearer, delete, get, post_json, put_json};

pub const UPLOAD: &str = "/api/attachments";
pub const PARTITIONS: &str = "/api/attachments/partitions";

/// Auth, the two modules whose records attachments checks (their record
/// targets: `catalog:catalog_product`, `customers:customer_deal`) and
/// attachments.
pub fn registry() -> Registry {
    let mut registry = stoa_auth::base_registry().unwrap();
    stoa_catalog::register(&mut registry, &stoa_auth::testing::organization_directory()).unwrap();
    stoa_customers::register(&mut registry, &stoa_auth::testing::user_directory()).unwrap();
    stoa_attachments::register(&mut registry).unwrap();
    registry.check_slots().unwrap();
    registry
}

/// Small limits so tests can pass them cheaply.
pub fn small_config() -> AttachmentsConfig {
    AttachmentsConfig {
        max_upload_bytes: 64 * 1024,
        tenant_quota_bytes: 100 * 1024,
        image_workers: 2,
        ..AttachmentsConfig::default()
    }
}

pub struct Harness<S> {
    pub app: TestApp<S>,
    pub storage: Storage,
    pub renderer: web::Data<Renderer>,
}

impl<S> Harness<S> {
    pub fn db(&self) -> &Db {
        &self.app.db
    }
}

pub async fn start(
    config: AttachmentsConfig,
    storage: Storage,
) -> Harness<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    let renderer = web::Data::new(Renderer::new(&config));
    let data = web::Data::new(storage.clone());
    let app = stoa_testkit::app()
        .module_with(|db| stoa_auth::testing::services(db, registry()).configurator())
        .module_with(|db| {
            Arc::new(stoa_auth::configure(
                stoa_auth::testing::state_with_registry(db, registry(), |_| {}),
            ))
        })
        .module(stoa_directory::configure)
        .module(move |cfg| {
            cfg.app_data(data.clone());
        })
        .module(stoa_attachments::configure_with(config, renderer.clone()))
        // Kept answers, as `stoa serve` keeps them (the library is one).
        .reads_with(stoa_auth::testing::reads)
        .start()
        .await;
    Harness {
        app,
        storage,
        renderer,
    }
}

pub async fn start_default() -> Harness<
    impl Service<Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>,
> {
    start(small_config(), Storage::memory()).await
}

pub async fn seed(db: &Db, name: &str, domain: &str) -> Tenant {
    stoa_auth::testing::seed_tenant_with(db, &registry(), name, domain).await
}

/// Every object key in the store.
pub async fn objects(storage: &Storage) -> Vec<String> {
    storage
        .list(None)
        .await
        .unwrap()
        .into_iter()
        .map(|k| k.to_string())
        .collect()
}

/// A multipart upload for `record` of `entity`.
pub fn form(entity: &str, record: &str, name: &str, mime: &str, bytes: &[u8]) -> Multipart {
    Multipart::new()
        .text("entityId", entity)
        .text("recordId", record)
        .file("file", name, mime, bytes)
}

pub async fn upload<S: AppService>(h: &Harness<S>, token: &str, form: Multipart) -> TestResponse {
    h.app.send(bearer(form.post(UPLOAD), token)).await
}

/// Uploads and returns the new attachment's id (asserting 200).
pub async fn uploaded<S: AppService>(h: &Harness<S>, token: &str, form: Multipart) -> String {
    let res = upload(h, token, form).await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()["item"]["id"].as_str().unwrap().to_string()
}

pub fn png(width: u32, height: u32) -> Vec<u8> {
    let img = image::DynamicImage::ImageRgb8(image::RgbImage::from_pixel(
        width,
        height,
        image::Rgb([200, 10, 10]),
    ));
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

pub fn error(res: &TestResponse) -> Value {
    res.json()["error"].clone()
}

/// How many attachment rows exist (every tenant).
pub async fn count_rows(db: &stoa_core::db::Db) -> i64 {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    let mut conn = db.conn().await.unwrap();
    stoa_attachments::schema::attachments::table
        .count()
        .get_result(&mut conn)
        .await
        .unwrap()
}

/// A product of `organization` (written as a fixture: the catalog owns the table).
pub async fn product(db: &Db, tenant: uuid::Uuid, organization: uuid::Uuid) -> String {
    fixture_id(
        db,
        &format!(
            "INSERT INTO catalog_products (tenant_id, organization_id, title) \
             VALUES ('{tenant}', '{organization}', 'Chair') RETURNING id"
        ),
    )
    .await
}

/// A deal of `organization` (written as a fixture: customers owns the table).
pub async fn deal(db: &Db, tenant: uuid::Uuid, organization: uuid::Uuid) -> String {
    fixture_id(
        db,
        &format!(
            "INSERT INTO customer_deals (tenant_id, organization_id, title) \
             VALUES ('{tenant}', '{organization}', 'Big deal') RETURNING id"
        ),
    )
    .await
}

async fn fixture_id(db: &Db, sql: &str) -> String {
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Id {
        #[diesel(sql_type = diesel::sql_types::Uuid)]
        id: uuid::Uuid,
    }
    let mut conn = db.conn().await.unwrap();
    let row: Id = diesel::sql_query(sql).get_result(&mut *conn).await.unwrap();
    row.id.to_string()
}

/// One attachment row as stored (every column the attacks could change).
pub async fn row(db: &Db, id: &str) -> stoa_attachments::model::Attachment {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use stoa_attachments::schema::attachments as a;
    let mut conn = db.conn().await.unwrap();
    a::table
        .filter(a::id.eq(uuid::Uuid::parse_str(id).unwrap()))
        .select(stoa_attachments::model::Attachment::as_select())
        .first(&mut *conn)
        .await
        .unwrap()
}

/// One partition row as stored.
pub async fn partition_row(db: &Db, id: &str) -> stoa_attachments::model::Partition {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use stoa_attachments::schema::attachment_partitions as p;
    let mut conn = db.conn().await.unwrap();
    p::table
        .filter(p::id.eq(uuid::Uuid::parse_str(id).unwrap()))
        .select(stoa_attachments::model::Partition::as_select())
        .first(&mut *conn)
        .await
        .unwrap()
}

/// An anonymous GET.
pub fn anonymous(path: &str) -> actix_web::test::TestRequest {
    actix_web::test::TestRequest::get().uri(path)
}

/// Runs SQL the tests need to shape data.
pub async fn exec(db: &Db, sql: &str) {
    use diesel_async::RunQueryDsl;
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(sql).execute(&mut *conn).await.unwrap();
}
