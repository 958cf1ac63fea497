//! The same upload, download and cleanup through an S3-compatible server
//! (moto, started by `cargo xtask test`), when one runs.

use std::time::Duration;

use stoa_core::outbound::{Outbound, OutboundConfig};
use stoa_core::storage::{S3Config, Storage, StorageConfig};

use super::support::*;

#[actix_web::test]
async fn files_round_trip_through_s3() {
    let Ok(endpoint) = std::env::var("STOA_TEST_S3_ENDPOINT") else {
        println!("skipped: no S3-compatible server (STOA_TEST_S3_ENDPOINT is unset)");
        return;
    };
    let bucket = format!("stoa-att-{}", uuid::Uuid::new_v4().simple());
    let outbound = OutboundConfig {
        first_byte_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(10),
        ..OutboundConfig::default()
    };
    let res = Outbound::new(&outbound)
        .unwrap()
        .trusted()
        .request(
            reqwest::Method::PUT,
            &format!("{}/{bucket}", endpoint.trim_end_matches('/')),
        )
        .unwrap()
        .send()
        .await
        .unwrap();
    assert!(res.is_success(), "create bucket: {}", res.status);
    let storage = Storage::from_config(
        &StorageConfig::S3(S3Config {
            bucket,
            region: "us-east-1".into(),
            endpoint: Some(endpoint),
            access_key_id: Some("testing".into()),
            secret_access_key: Some(stoa_core::config::Secret::new("testing")),
            virtual_hosted: false,
        }),
        &outbound,
    )
    .unwrap();
    let h = start(small_config(), storage).await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    let image = png(50, 50);
    let id = uploaded(&h, &admin, form("x:y", "r", "p.png", "image/png", &image)).await;
    let res = h
        .app
        .send(get(&format!("/api/attachments/file/{id}"), &admin))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(&res.body[..], &image[..]);
    let req =
        get(&format!("/api/attachments/file/{id}"), &admin).insert_header(("range", "bytes=8-15"));
    let res = h.app.send(req).await;
    assert_eq!(res.status, 206);
    assert_eq!(&res.body[..], &image[8..16]);
    let res = h
        .app
        .send(get(
            &format!("/api/attachments/image/{id}/p.png?width=10"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200);

    // Oversized: nothing left in the bucket.
    let big = vec![b'z'; 64 * 1024 + 10];
    let res = upload(&h, &admin, form("x:y", "r", "big.txt", "text/plain", &big)).await;
    assert_eq!(res.status, 413);
    assert_eq!(
        objects(&h.storage).await.len(),
        2,
        "original and variant only"
    );
}
