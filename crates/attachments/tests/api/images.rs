//! `GET /attachments/image/{id}/{slug}`: parameters first, images only, the
//! pixel cap before decoding, variants cached and rendered once.

use super::support::*;

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A tiny PNG whose header claims `w` × `h` pixels (a decompression bomb).
fn bomb(w: u32, h: u32) -> Vec<u8> {
    let mut bytes = png(1, 1);
    bytes[16..20].copy_from_slice(&w.to_be_bytes());
    bytes[20..24].copy_from_slice(&h.to_be_bytes());
    let crc = crc32(&bytes[12..29]);
    bytes[29..33].copy_from_slice(&crc.to_be_bytes());
    bytes
}

#[actix_web::test]
async fn images_are_resized_cached_and_rendered_once() {
    let h = start_default().await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    let id = uploaded(
        &h,
        &admin,
        form("x:y", "r", "p.png", "image/png", &png(400, 200)),
    )
    .await;
    let path = format!("/api/attachments/image/{id}/p.png?width=100&height=100&cropType=contain");

    let res = h.app.send(get(&path, &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.header("content-type"), Some("image/png"));
    assert!(
        res.header("cache-control")
            .unwrap()
            .contains("max-age=31536000")
    );
    assert!(res.header("etag").is_some());
    let img = image::load_from_memory(&res.body).unwrap();
    assert_eq!((img.width(), img.height()), (100, 50));
    assert_eq!(h.renderer.renders(), 1);
    assert_eq!(
        objects(&h.storage).await.len(),
        2,
        "original and one variant"
    );

    // A cached variant renders nothing; the route without a slug works too.
    let again = h.app.send(get(&path, &admin)).await;
    assert_eq!(again.body, res.body);
    let res = h
        .app
        .send(get(
            &format!("/api/attachments/image/{id}?width=100&height=100&cropType=contain"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(h.renderer.renders(), 1);

    // Eight concurrent requests for a missing variant render it once.
    let cover = format!("/api/attachments/image/{id}/p.png?width=64&height=64");
    let results =
        futures_util::future::join_all((0..8).map(|_| h.app.send(get(&cover, &admin)))).await;
    assert!(results.iter().all(|r| r.status == 200));
    assert_eq!(h.renderer.renders(), 2);
    let img = image::load_from_memory(&results[0].body).unwrap();
    assert_eq!((img.width(), img.height()), (64, 64));

    // Deleting the attachment removes the variants too (through the outbox).
    let res = h
        .app
        .send(delete(&format!("{UPLOAD}?id={id}"), &admin))
        .await;
    assert_eq!(res.status, 200);
    let cleanup: std::sync::Arc<dyn stoa_core::command::outbox::Subscriber> = std::sync::Arc::new(
        stoa_attachments::StorageCleanup::new(h.storage.clone(), h.db().clone()),
    );
    stoa_core::command::outbox::Dispatcher::new(h.db().clone(), vec![cleanup])
        .run_once()
        .await
        .unwrap();
    assert!(objects(&h.storage).await.is_empty());
}

#[actix_web::test]
async fn bad_parameters_non_images_and_bombs_are_400() {
    let h = start_default().await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    let missing = uuid::Uuid::new_v4();
    for query in [
        "width=0",
        "width=-1",
        "width=5000",
        "height=abc",
        "cropType=fill",
    ] {
        // Parameters are checked first, even for an id that does not exist.
        let res = h
            .app
            .send(get(
                &format!("/api/attachments/image/{missing}/x.png?{query}"),
                &admin,
            ))
            .await;
        assert_eq!(res.status, 400, "{query}");
        assert_eq!(error(&res), "Invalid size parameters");
    }
    let text = uploaded(
        &h,
        &admin,
        form("x:y", "r", "a.txt", "text/plain", b"words"),
    )
    .await;
    let res = h
        .app
        .send(get(
            &format!("/api/attachments/image/{text}/a.txt?width=10"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(error(&res), "Unsupported media type");

    let bomb = uploaded(
        &h,
        &admin,
        form("x:y", "r", "b.png", "image/png", &bomb(30_000, 30_000)),
    )
    .await;
    let res = h
        .app
        .send(get(
            &format!("/api/attachments/image/{bomb}/b.png?width=10"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(error(&res), "Image exceeds pixel limit");
    assert_eq!(objects(&h.storage).await.len(), 2, "no variant stored");

    // Anonymous callers cannot read a private image.
    let res = h
        .app
        .send(
            actix_web::test::TestRequest::get()
                .uri(&format!("/api/attachments/image/{bomb}/b.png")),
        )
        .await;
    assert_eq!(res.status, 401);
}
