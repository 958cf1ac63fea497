//! `POST /attachments`, `GET /attachments`, `DELETE /attachments`: streamed
//! uploads, content checks, limits, the quota under concurrency, cleanup.

use std::sync::Arc;

use stoa_attachments::StorageCleanup;
use stoa_core::command::outbox::{Dispatcher, Subscriber};
use stoa_testkit::Multipart;

use super::support::*;

#[actix_web::test]
async fn an_upload_is_stored_listed_served_and_deleted_with_its_objects() {
    let h = start_default().await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    let form = form(
        "customers:person",
        "p-1",
        "../../My Notes.TXT",
        "text/plain",
        b"hello world",
    )
    .text("tags", "[\"a\", \" b \", \"a\", \"\"]")
    .text("customFields", "{\"color\": \"red\", \"sizes\": [1, 2]}");
    let res = upload(&h, &admin, form).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let item = res.json()["item"].clone();
    let id = item["id"].as_str().unwrap().to_string();
    assert_eq!(item["fileName"], "My_Notes.txt");
    assert_eq!(item["fileSize"], 11);
    assert_eq!(item["mimeType"], "text/plain");
    assert_eq!(item["partitionCode"], "privateAttachments");
    assert_eq!(item["content"], "hello world");
    assert_eq!(item["tags"], serde_json::json!(["a", "b"]));
    assert_eq!(
        item["assignments"],
        serde_json::json!([{"type": "customers:person", "id": "p-1"}])
    );
    assert_eq!(item["customFields"]["sizes"], serde_json::json!([1, 2]));
    assert_eq!(item["url"], format!("/api/attachments/file/{id}"));
    assert_eq!(
        item["thumbnailUrl"],
        format!("/api/attachments/image/{id}/my-notes.txt?width=320&height=320")
    );
    // Through the command bus: its event is in the outbox with the row.
    let created = stoa_testkit::outbox_events_named(h.db(), "attachments.attachment.created").await;
    assert_eq!(created.len(), 1);
    assert_eq!(objects(&h.storage).await.len(), 1);

    let list = h
        .app
        .send(get(
            &format!("{UPLOAD}?entityId=customers:person&recordId=p-1"),
            &admin,
        ))
        .await;
    assert_eq!(list.status, 200, "{}", list.text());
    assert_eq!(list.json()["items"][0]["id"], id.as_str());
    assert!(
        list.json().get("total").is_none(),
        "no paging keys without paging"
    );
    let paged = h
        .app
        .send(get(
            &format!("{UPLOAD}?entityId=customers:person&recordId=p-1&page=5&pageSize=10"),
            &admin,
        ))
        .await;
    assert_eq!(paged.json()["page"], 1, "clamped to the last page");
    assert_eq!(paged.json()["total"], 1);
    let res = h
        .app
        .send(get(&format!("{UPLOAD}?entityId=customers:person"), &admin))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(error(&res), "entityId and recordId are required");

    // The file comes back byte for byte, as a download with a sandbox.
    let file = h
        .app
        .send(get(&format!("/api/attachments/file/{id}"), &admin))
        .await;
    assert_eq!(file.status, 200);
    assert_eq!(&file.body[..], b"hello world");
    assert_eq!(
        file.header("content-type"),
        Some("application/octet-stream")
    );
    assert!(
        file.header("content-disposition")
            .unwrap()
            .starts_with("attachment")
    );
    assert!(
        file.header("content-security-policy")
            .unwrap()
            .contains("sandbox")
    );
    assert_eq!(file.header("x-content-type-options"), Some("nosniff"));

    // Another tenant's admin cannot delete it; a missing id is 400.
    let globex = seed(h.db(), "Globex", "globex.com").await;
    let other = token_for(h.db(), globex.admin).await;
    let res = h
        .app
        .send(delete(&format!("{UPLOAD}?id={id}"), &other))
        .await;
    assert_eq!(res.status, 404);
    let res = h.app.send(delete(UPLOAD, &admin)).await;
    assert_eq!(res.status, 400);
    assert_eq!(error(&res), "Attachment id is required");

    let res = h
        .app
        .send(delete(&format!("{UPLOAD}?id={id}"), &admin))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        h.app
            .send(get(&format!("/api/attachments/file/{id}"), &admin))
            .await
            .status,
        404
    );
    // The object leaves storage when the outbox delivers the deletion, and
    // a second delivery (a crash before it was recorded) is harmless.
    assert_eq!(objects(&h.storage).await.len(), 1);
    let cleanup: Arc<dyn Subscriber> =
        Arc::new(StorageCleanup::new(h.storage.clone(), h.db().clone()));
    Dispatcher::new(h.db().clone(), vec![cleanup.clone()])
        .run_once()
        .await
        .unwrap();
    assert!(objects(&h.storage).await.is_empty());
    let events = stoa_testkit::outbox_events_named(h.db(), "attachments.attachment.deleted").await;
    assert_eq!(events.len(), 1);
}

#[actix_web::test]
async fn bad_uploads_are_refused_and_leave_nothing() {
    let h = start_default().await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    let cases: Vec<(Multipart, u16, &str)> = vec![
        (
            Multipart::new()
                .text("entityId", "x:y")
                .file("file", "a.txt", "text/plain", b"x"),
            400,
            "entityId, recordId and file are required",
        ),
        (
            Multipart::new()
                .text("entityId", "x:y")
                .text("recordId", "r"),
            400,
            "entityId, recordId and file are required",
        ),
        (
            form("x:y", "r", "tool.exe", "application/octet-stream", b"MZ.."),
            400,
            "Executable file types are not allowed as attachments.",
        ),
        (
            form("x:y", "r", "report.exe.txt", "text/plain", b"x"),
            400,
            "Executable file types are not allowed as attachments.",
        ),
        (
            form("x:y", "r", "notes.txt", "text/plain", b"MZ\x90\x00binary"),
            400,
            "Executable file types are not allowed as attachments.",
        ),
        (
            form("x:y", "r", "page.html", "text/html", b"<p>x</p>"),
            400,
            "Active content uploads are not allowed.",
        ),
        (
            form(
                "x:y",
                "r",
                "readme.txt",
                "text/plain",
                b"<!DOCTYPE html><script>alert(1)</script>",
            ),
            400,
            "Active content uploads are not allowed.",
        ),
        (
            form(
                "x:y",
                "r",
                "logo.svg",
                "image/svg+xml",
                b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>",
            ),
            400,
            "Active content uploads are not allowed.",
        ),
        (
            form(
                "x:y",
                "r",
                "photo.png",
                "image/png",
                b"<svg onload=alert(1)>",
            ),
            400,
            "Active content uploads are not allowed.",
        ),
        (
            form("x:y", "r", "photo.png", "image/png", b"just some text"),
            400,
            "File content does not match its image type.",
        ),
        (
            form("x:y", "r", "empty.txt", "text/plain", b""),
            400,
            "The file is empty.",
        ),
        (
            form("x:y", "../../etc", "a.txt", "text/plain", b"x"),
            400,
            "recordId may only contain letters, digits, '_', ':', '.' and '-' (no '..')",
        ),
        (
            form("x/y", "r", "a.txt", "text/plain", b"x"),
            400,
            "entityId may only contain letters, digits, '_', ':', '.' and '-' (no '..')",
        ),
        (
            form("x:y", "r%2f..", "a.txt", "text/plain", b"x"),
            400,
            "recordId may only contain letters, digits, '_', ':', '.' and '-' (no '..')",
        ),
        (
            form("x:y", "r", "a.txt", "text/plain", b"x").text("partitionCode", "nope"),
            400,
            "Unknown storage partition.",
        ),
        (
            form("x:y", "r", "a.txt", "text/plain", b"x").text("partitionCode", "../x"),
            400,
            "Unknown storage partition.",
        ),
        (
            form("x:y", "r", "a.txt", "text/plain", b"x").text("partitionCode", "productsMedia"),
            403,
            "Public storage partitions cannot be selected explicitly for this upload.",
        ),
        (
            form("x:y", "r", "a.txt", "text/plain", b"x").text("tags", "[1,2]"),
            400,
            "Invalid tags",
        ),
        (
            form("x:y", "r", "a.txt", "text/plain", b"x").text("assignments", "[{\"type\":\"\"}]"),
            400,
            "Invalid assignments",
        ),
        (
            form("x:y", "r", "a.txt", "text/plain", b"x")
                .text("customFields", "{\"a\":{\"nested\":1}}"),
            400,
            "Invalid customFields",
        ),
        (
            form("x:y", "r", "a.txt", "text/plain", b"x").text("customFields", "{\"../k\":1}"),
            400,
            "Invalid customFields",
        ),
    ];
    for (form, status, message) in cases {
        let res = upload(&h, &admin, form).await;
        assert_eq!(res.status, status, "{message}: {}", res.text());
        assert_eq!(error(&res), message);
        assert!(
            objects(&h.storage).await.is_empty(),
            "{message}: nothing stored"
        );
    }
    // Not multipart at all.
    let res = h
        .app
        .send(post_json(
            UPLOAD,
            &admin,
            serde_json::json!({"entityId": "x"}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(error(&res), "Expected multipart/form-data");

    // Over the size limit (64 KiB in these tests): 413 and nothing stored.
    let big = vec![b'a'; 64 * 1024 + 1];
    let res = upload(&h, &admin, form("x:y", "r", "big.txt", "text/plain", &big)).await;
    assert_eq!(res.status, 413, "{}", res.text());
    assert!(objects(&h.storage).await.is_empty());
    let stored: i64 = count_rows(h.db()).await;
    assert_eq!(stored, 0);

    // Employees (view only) cannot upload; anonymous callers are 401.
    let employee = token_for(h.db(), acme.employee).await;
    let res = upload(&h, &employee, form("x:y", "r", "a.txt", "text/plain", b"x")).await;
    assert_eq!(res.status, 403);
    let res = h
        .app
        .send(form("x:y", "r", "a.txt", "text/plain", b"x").post(UPLOAD))
        .await;
    assert_eq!(res.status, 401);
}

#[actix_web::test]
async fn the_quota_holds_under_concurrent_uploads() {
    // Quota 100 KiB, files of 40 KiB: two fit, the third does not, however
    // the six concurrent uploads interleave.
    let h = start_default().await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    let body = vec![b'q'; 40 * 1024];
    let requests = (0..6).map(|i| {
        let form = form("x:y", &format!("r{i}"), "q.txt", "text/plain", &body);
        upload(&h, &admin, form)
    });
    let results = futures_util::future::join_all(requests).await;
    let ok = results.iter().filter(|r| r.status == 200).count();
    let over: Vec<_> = results.iter().filter(|r| r.status == 413).collect();
    assert_eq!(
        ok,
        2,
        "{:?}",
        results.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    assert_eq!(over.len(), 4);
    assert_eq!(
        error(over[0]),
        "Attachment storage quota exceeded for this tenant."
    );
    assert_eq!(count_rows(h.db()).await, 2);
    assert_eq!(
        objects(&h.storage).await.len(),
        2,
        "refused files were removed"
    );

    // Another tenant has a quota of its own.
    let globex = seed(h.db(), "Globex", "globex.com").await;
    let other = token_for(h.db(), globex.admin).await;
    uploaded(&h, &other, form("x:y", "r", "q.txt", "text/plain", &body)).await;
}

#[actix_web::test]
async fn an_admin_limited_to_one_organization_sees_only_its_files() {
    let h = start_default().await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    let branch = organization(h.db(), acme.tenant_id, acme.organization_id, "Branch").await;
    let limited = user_with_features(
        h.db(),
        &acme,
        "limited@acme.com",
        &["attachments.view", "attachments.manage"],
        Some(vec![branch]),
        Some(branch),
    )
    .await;
    let limited = token_for(h.db(), limited).await;
    let id = uploaded(&h, &admin, form("x:y", "r", "a.txt", "text/plain", b"root")).await;
    let mine = uploaded(
        &h,
        &limited,
        form("x:y", "r", "b.txt", "text/plain", b"branch"),
    )
    .await;

    let list = h
        .app
        .send(get(&format!("{UPLOAD}?entityId=x:y&recordId=r"), &limited))
        .await;
    let ids: Vec<_> = list.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].clone())
        .collect();
    assert_eq!(ids, vec![serde_json::json!(mine)]);
    assert_eq!(
        h.app
            .send(get(&format!("/api/attachments/file/{id}"), &limited))
            .await
            .status,
        404
    );
    assert_eq!(
        h.app
            .send(delete(&format!("{UPLOAD}?id={id}"), &limited))
            .await
            .status,
        404
    );
    assert_eq!(
        h.app
            .send(get(&format!("/api/attachments/file/{mine}"), &limited))
            .await
            .status,
        200
    );
}

/// Issue 49: the storage cleanup deletes files only for the attachments
/// module's own deletions (origin `attachments`, set by the bus), whose
/// payload names the event's own tenant, and only once the row is gone. A
/// business rule's `attachments.attachment.deleted` naming another tenant's
/// file, an event whose payload names another tenant, and one naming a live
/// attachment all leave the victim's file where it is.
#[actix_web::test]
async fn forged_deletion_events_remove_no_file() {
    use serde_json::json;
    use stoa_core::command::Event;
    use stoa_core::command::outbox::{Envelope, Origin, enqueue_many};
    let h = start_default().await;
    let victim = seed(h.db(), "Victim", "victim.com").await;
    let attacker = seed(h.db(), "Attacker", "attacker.com").await;
    let admin = token_for(h.db(), victim.admin).await;
    let id = uploaded(
        &h,
        &admin,
        form(
            "customers:person",
            "p-1",
            "secret.txt",
            "text/plain",
            b"secret",
        ),
    )
    .await;
    let stored = objects(&h.storage).await;
    assert_eq!(stored.len(), 1);
    let payload =
        json!({"id": id, "tenantId": victim.tenant_id, "organizationId": victim.organization_id});
    let event = |origin: Origin, tenant: uuid::Uuid| {
        (
            Event::new("attachments.attachment.deleted", payload.clone()),
            Envelope {
                origin,
                tenant_id: Some(tenant),
                ..Default::default()
            },
        )
    };
    let deliver = |events: Vec<(Event, Envelope)>| {
        let db = h.db().clone();
        let storage = h.storage.clone();
        async move {
            let db2 = db.clone();
            stoa_core::rls::bypass("test", async move {
                let mut conn = db2.conn().await.unwrap();
                enqueue_many(&mut conn, &events).await.unwrap();
            })
            .await;
            let cleanup: Arc<dyn Subscriber> = Arc::new(StorageCleanup::new(storage, db.clone()));
            let dispatcher = Dispatcher::new(db, vec![cleanup]);
            while dispatcher.run_once().await.unwrap() > 0 {}
        }
    };
    // The module's origin and tenant, but the attachment is live.
    deliver(vec![event(Origin::module("attachments"), victim.tenant_id)]).await;
    assert_eq!(
        objects(&h.storage).await,
        stored,
        "a live attachment lost its file"
    );
    let res = h
        .app
        .send(get(&format!("/api/attachments/file/{id}"), &admin))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    // The row gone (between a deletion's commit and its cleanup): still only
    // the module's own event for the tenant's own file removes it.
    exec(
        h.db(),
        &format!("DELETE FROM attachments WHERE id = '{id}'"),
    )
    .await;
    deliver(vec![
        // A rule of the attacker's tenant emitting the module's event name.
        event(Origin::module("business_rules"), attacker.tenant_id),
        // No origin at all.
        event(Origin::default(), victim.tenant_id),
        // The module's origin, but the payload names another tenant.
        event(Origin::module("attachments"), attacker.tenant_id),
    ])
    .await;
    assert_eq!(
        objects(&h.storage).await,
        stored,
        "a forged event deleted a file"
    );
    deliver(vec![event(Origin::module("attachments"), victim.tenant_id)]).await;
    assert!(
        objects(&h.storage).await.is_empty(),
        "the genuine deletion cleans up"
    );
}
