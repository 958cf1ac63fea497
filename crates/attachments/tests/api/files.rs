//! `GET /attachments/file/{id}`: who may read, how files are sent (inline
//! images, everything else a sandboxed download), ranges and ETags.

use stoa_testkit::requests::bearer;

use super::support::*;

fn file(id: &str) -> String {
    format!("/api/attachments/file/{id}")
}

#[actix_web::test]
async fn private_files_need_a_caller_in_scope_and_public_ones_do_not() {
    let h = start_default().await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    let private = uploaded(
        &h,
        &admin,
        form("x:y", "r", "a.txt", "text/plain", b"secret"),
    )
    .await;
    let image = png(8, 8);
    let chair = product(h.db(), acme.tenant_id, acme.organization_id).await;
    let public = uploaded(
        &h,
        &admin,
        form(
            "catalog:catalog_product",
            &chair,
            "p.png",
            "image/png",
            &image,
        ),
    )
    .await;

    let res = h
        .app
        .send(actix_web::test::TestRequest::get().uri(&file(&private)))
        .await;
    assert_eq!(res.status, 401);
    let res = h
        .app
        .send(actix_web::test::TestRequest::get().uri(&file(&public)))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.header("content-type"), Some("image/png"));
    assert!(
        res.header("content-disposition")
            .unwrap()
            .starts_with("inline")
    );
    assert_eq!(res.header("cache-control"), Some("public, max-age=86400"));
    assert_eq!(&res.body[..], &image[..]);

    // Another tenant's admin: the ids do not exist for it.
    let globex = seed(h.db(), "Globex", "globex.com").await;
    let other = token_for(h.db(), globex.admin).await;
    for id in [&private, &public] {
        assert_eq!(h.app.send(get(&file(id), &other)).await.status, 404);
        let res = h
            .app
            .send(get(
                &format!("/api/attachments/image/{id}/x.png?width=10"),
                &other,
            ))
            .await;
        assert_eq!(res.status, 404);
    }
    // A super admin reads any file, byte for byte.
    let root = token_for(h.db(), globex.superadmin).await;
    let res = h.app.send(get(&file(&private), &root)).await;
    assert_eq!(res.status, 200);
    assert_eq!(&res.body[..], b"secret");
    assert_eq!(res.header("cache-control"), Some("private, max-age=60"));

    // Unknown and malformed ids.
    let res = h
        .app
        .send(get(&file(&uuid::Uuid::new_v4().to_string()), &admin))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(error(&res), "Attachment not found");
    for bad in ["nope", "..%2f..%2fetc%2fpasswd", "%00"] {
        let res = h.app.send(get(&file(bad), &admin)).await;
        assert_eq!(res.status, 400, "{bad}");
    }
}

#[actix_web::test]
async fn images_download_on_request_and_ranges_and_etags_work() {
    let h = start_default().await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    let image = png(16, 16);
    let id = uploaded(&h, &admin, form("x:y", "r", "p.png", "image/png", &image)).await;

    let res = h
        .app
        .send(get(&format!("{}?download=1", file(&id)), &admin))
        .await;
    assert_eq!(res.header("content-type"), Some("application/octet-stream"));
    assert!(
        res.header("content-disposition")
            .unwrap()
            .starts_with("attachment")
    );

    let res = h.app.send(get(&file(&id), &admin)).await;
    let etag = res.header("etag").unwrap().to_string();
    let req = get(&file(&id), &admin).insert_header(("if-none-match", etag.as_str()));
    assert_eq!(h.app.send(req).await.status, 304);

    let req = get(&file(&id), &admin).insert_header(("range", "bytes=0-7"));
    let res = h.app.send(req).await;
    assert_eq!(res.status, 206);
    assert_eq!(&res.body[..], &image[..8]);
    assert_eq!(
        res.header("content-range").unwrap(),
        format!("bytes 0-7/{}", image.len())
    );
    let req = get(&file(&id), &admin).insert_header(("range", "bytes=999999-"));
    assert_eq!(h.app.send(req).await.status, 416);
    let _ = bearer;
}
