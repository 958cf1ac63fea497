//! Streamed multipart uploads through a test-only route: under the limit the
//! file is stored and round-trips; past it the answer is 413 and no file is
//! left, including files of the same request stored before the one too large.

use actix_web::test::TestRequest;
use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::{Value, json};
use stoa_core::AppError;
use stoa_core::storage::{Storage, key};
use stoa_core::upload::actix_multipart::Multipart;
use stoa_core::upload::{UploadPolicy, receive};
use stoa_testkit::app;

use super::storage::TempDir;

const POLICY: UploadPolicy = UploadPolicy {
    max_file_bytes: 1024,
    max_files: 2,
    max_field_bytes: 64,
    max_fields: 2,
};

async fn upload(
    req: HttpRequest,
    payload: Multipart,
    storage: web::Data<Storage>,
) -> Result<HttpResponse, AppError> {
    let mut n = 0;
    let batch = uuid::Uuid::new_v4().to_string();
    let upload = receive(&req, payload, &storage, &POLICY, |_| {
        n += 1;
        key(["uploads", &batch, &n.to_string()])
    })
    .await?;
    let files: Vec<Value> = upload
        .files
        .iter()
        .map(|f| {
            json!({
                "key": f.key.to_string(),
                "size": f.size,
                "field": f.meta.field,
                "fileName": f.meta.file_name,
                "contentType": f.meta.content_type,
            })
        })
        .collect();
    Ok(HttpResponse::Ok().json(json!({"files": files, "title": upload.field("title")})))
}

fn configure(storage: Storage) -> impl Fn(&mut stoa_core::http::ServiceConfig) {
    let storage = web::Data::new(storage);
    move |cfg| {
        cfg.app_data(storage.clone())
            .route("/test/upload", web::post().to(upload));
    }
}

const BOUNDARY: &str = "stoa-test-boundary";

enum Part<'a> {
    File(&'a str, &'a str, Vec<u8>),
    Text(&'a str, &'a str),
}

fn multipart(parts: &[Part<'_>]) -> Vec<u8> {
    let mut body = Vec::new();
    for part in parts {
        body.extend_from_slice(format!("--{BOUNDARY}\r\n").as_bytes());
        match part {
            Part::File(name, file_name, content) => {
                body.extend_from_slice(
                    format!(
                        "Content-Disposition: form-data; name=\"{name}\"; filename=\"{file_name}\"\r\n\
                         Content-Type: application/octet-stream\r\n\r\n"
                    )
                    .as_bytes(),
                );
                body.extend_from_slice(content);
            }
            Part::Text(name, value) => {
                body.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}")
                        .as_bytes(),
                );
            }
        }
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

fn post(body: Vec<u8>) -> TestRequest {
    TestRequest::post()
        .uri("/api/test/upload")
        .insert_header((
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        ))
        .set_payload(body)
}

#[actix_web::test]
async fn a_file_under_the_limit_is_stored_and_round_trips() {
    let dir = TempDir::new();
    let storage = Storage::local(dir.0.join("files")).unwrap();
    let app = app().module(configure(storage.clone())).start().await;
    let content: Vec<u8> = (0..1024u32).map(|i| (i % 251) as u8).collect();
    let res = app
        .send(post(multipart(&[
            Part::Text("title", "Q3 report"),
            Part::File("file", "report.bin", content.clone()),
        ])))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["title"], "Q3 report");
    let file = &body["files"][0];
    assert_eq!(file["size"], 1024);
    assert_eq!(file["fileName"], "report.bin");
    assert_eq!(file["field"], "file");
    assert_eq!(file["contentType"], "application/octet-stream");
    let stored = stoa_core::storage::StorageKey::parse(file["key"].as_str().unwrap()).unwrap();
    assert_eq!(
        storage.get(&stored).await.unwrap().as_ref(),
        content.as_slice()
    );
    assert_eq!(dir.files().len(), 1);
}

#[actix_web::test]
async fn a_file_over_the_limit_is_413_and_leaves_no_file() {
    let dir = TempDir::new();
    let storage = Storage::local(dir.0.join("files")).unwrap();
    let app = app().module(configure(storage.clone())).start().await;

    // One byte over, alone.
    let res = app
        .send(post(multipart(&[Part::File(
            "file",
            "big.bin",
            vec![7; 1025],
        )])))
        .await;
    assert_eq!(res.status, 413, "{}", res.text());
    assert_eq!(res.json()["code"], "upload_too_large");
    assert_eq!(res.json()["maxBytes"], 1024);

    // A first file within the limit, then one over it: neither is kept.
    let res = app
        .send(post(multipart(&[
            Part::File("a", "ok.bin", vec![1; 1000]),
            Part::File("b", "big.bin", vec![2; 4000]),
        ])))
        .await;
    assert_eq!(res.status, 413, "{}", res.text());
    assert!(storage.list(None).await.unwrap().is_empty());
    assert!(dir.files().is_empty(), "left behind: {:?}", dir.files());
}

#[actix_web::test]
async fn a_declared_length_past_the_policy_is_refused_before_reading() {
    let storage = Storage::memory();
    let app = app().module(configure(storage.clone())).start().await;
    let body = multipart(&[Part::File("file", "a.bin", vec![1; 10])]);
    let req = post(body).insert_header((
        "content-length",
        (POLICY.max_request_bytes() + 1).to_string(),
    ));
    let res = app.send(req).await;
    assert_eq!(res.status, 413, "{}", res.text());
    assert!(storage.list(None).await.unwrap().is_empty());
}

#[actix_web::test]
async fn bad_multipart_input_is_a_clear_4xx_and_stores_nothing() {
    let storage = Storage::memory();
    let app = app().module(configure(storage.clone())).start().await;

    // Too many files: the two stored before the third are removed.
    let res = app
        .send(post(multipart(&[
            Part::File("a", "1.bin", vec![1; 10]),
            Part::File("b", "2.bin", vec![2; 10]),
            Part::File("c", "3.bin", vec![3; 10]),
        ])))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert!(
        res.json()["error"]
            .as_str()
            .unwrap()
            .contains("Too many files")
    );

    // A text field over its bound.
    let long = "x".repeat(65);
    let res = app
        .send(post(multipart(&[Part::Text("title", &long)])))
        .await;
    assert_eq!(res.status, 413, "{}", res.text());

    // A control character in a text field.
    let res = app
        .send(post(multipart(&[Part::Text("title", "a\u{0}b")])))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());

    // Not multipart at all.
    let res = app
        .post_json("/api/test/upload", &json!({"file": "x"}))
        .await;
    assert_eq!(res.status, 415, "{}", res.text());
    assert!(res.json()["error"].is_string());

    // Truncated body (no closing boundary).
    let mut body = multipart(&[Part::File("file", "a.bin", vec![1; 10])]);
    body.truncate(body.len() - 30);
    let res = app.send(post(body)).await;
    assert_eq!(res.status, 400, "{}", res.text());

    assert!(storage.list(None).await.unwrap().is_empty());
}
