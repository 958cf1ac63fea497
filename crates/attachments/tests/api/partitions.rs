//! `/attachments/partitions`: the defaults, unique and immutable codes,
//! tenant boundaries, the environment's lock, partitions in use.

use serde_json::json;
use stoa_attachments::AttachmentsConfig;
use stoa_core::storage::Storage;

use super::support::*;

#[actix_web::test]
async fn the_defaults_exist_and_partitions_are_created_updated_and_deleted() {
    let h = start_default().await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;

    let res = h.app.send(get(PARTITIONS, &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let codes: Vec<_> = res.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["code"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(codes, ["privateAttachments", "productsMedia"]);
    assert_eq!(res.json()["items"][1]["isPublic"], true);
    assert_eq!(
        res.json()["items"][1]["envKey"],
        "ATTACHMENTS_PARTITION_PRODUCTS_MEDIA_ROOT"
    );

    let body = json!({"code": "contracts", "title": " Contracts ", "storageDriver": "s3"});
    let res = h
        .app
        .send(post_json(PARTITIONS, &admin, body.clone()))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let item = res.json()["item"].clone();
    assert_eq!(item["title"], "Contracts");
    assert_eq!(item["isPublic"], false);
    assert_eq!(item["requiresOcr"], true);
    assert_eq!(item["storageDriver"], "s3");
    let id = item["id"].as_str().unwrap().to_string();

    // Codes are unique across tenants.
    let res = h
        .app
        .send(post_json(PARTITIONS, &admin, body.clone()))
        .await;
    assert_eq!(res.status, 409);
    assert_eq!(error(&res), "Partition code already exists.");
    let globex = seed(h.db(), "Globex", "globex.com").await;
    let other = token_for(h.db(), globex.admin).await;
    let res = h.app.send(post_json(PARTITIONS, &other, body)).await;
    assert_eq!(res.status, 409);

    // The code cannot change; other fields can, and omitted storageDriver stays.
    let res = h
        .app
        .send(put_json(
            PARTITIONS,
            &admin,
            json!({"id": id, "code": "contracts2", "title": "X"}),
        ))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(error(&res), "Partition code cannot be changed.");
    let res = h
        .app
        .send(put_json(
            PARTITIONS,
            &admin,
            json!({"id": id, "code": "contracts", "title": "Signed", "isPublic": true}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["item"]["title"], "Signed");
    assert_eq!(res.json()["item"]["isPublic"], true);
    assert_eq!(res.json()["item"]["storageDriver"], "s3");

    // Another tenant neither sees nor changes it.
    let res = h.app.send(get(PARTITIONS, &other)).await;
    assert_eq!(res.json()["items"].as_array().unwrap().len(), 2);
    let res = h
        .app
        .send(put_json(
            PARTITIONS,
            &other,
            json!({"id": id, "code": "contracts", "title": "Mine"}),
        ))
        .await;
    assert_eq!(res.status, 404);
    let res = h
        .app
        .send(delete(&format!("{PARTITIONS}?id={id}"), &other))
        .await;
    assert_eq!(res.status, 404);

    let res = h
        .app
        .send(delete(&format!("{PARTITIONS}?id={id}"), &admin))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = h
        .app
        .send(delete(&format!("{PARTITIONS}?id={id}"), &admin))
        .await;
    assert_eq!(res.status, 404);
}

#[actix_web::test]
async fn defaults_stay_bad_input_is_400_and_employees_are_403() {
    let h = start_default().await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    let root = token_for(h.db(), acme.superadmin).await;
    let res = h.app.send(get(PARTITIONS, &root)).await;
    let default_id = res.json()["items"][0]["id"].as_str().unwrap().to_string();

    // A tenant admin cannot edit the global defaults; nobody deletes them.
    let res = h
        .app
        .send(put_json(
            PARTITIONS,
            &admin,
            json!({"id": default_id, "code": "privateAttachments", "title": "Mine"}),
        ))
        .await;
    assert_eq!(res.status, 404);
    let res = h
        .app
        .send(delete(&format!("{PARTITIONS}?id={default_id}"), &root))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(error(&res), "Default partitions cannot be removed.");

    for (body, what) in [
        (json!({"code": "a", "title": "T"}), "short code"),
        (json!({"code": "bad code!", "title": "T"}), "bad characters"),
        (json!({"code": "ok_code", "title": ""}), "empty title"),
        (
            json!({"code": "ok_code", "title": "T", "storageDriver": "ftp"}),
            "driver",
        ),
        (
            json!({"code": "ok_code", "title": "T", "configJson": [1]}),
            "configJson",
        ),
        (json!({"title": "T"}), "missing code"),
    ] {
        let res = h.app.send(post_json(PARTITIONS, &admin, body)).await;
        assert_eq!(res.status, 400, "{what}: {}", res.text());
        assert!(res.json()["error"].is_string(), "{what}");
    }
    for query in ["", "?id=nope", "?id=..%2f..%2fetc"] {
        let res = h
            .app
            .send(delete(&format!("{PARTITIONS}{query}"), &admin))
            .await;
        assert_eq!(res.status, 400, "{query}");
        assert_eq!(error(&res), "Partition id is required");
    }
    let res = h
        .app
        .send(put_json(
            PARTITIONS,
            &admin,
            json!({"code": "x1", "title": "T"}),
        ))
        .await;
    assert_eq!(res.status, 400);

    let employee = token_for(h.db(), acme.employee).await;
    let res = h.app.send(get(PARTITIONS, &employee)).await;
    assert_eq!(res.status, 403);
    let res = h
        .app
        .send(post_json(
            PARTITIONS,
            &employee,
            json!({"code": "emp", "title": "T"}),
        ))
        .await;
    assert_eq!(res.status, 403);
}

#[actix_web::test]
async fn a_partition_in_use_is_409() {
    let h = start_default().await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    let res = h
        .app
        .send(post_json(
            PARTITIONS,
            &admin,
            json!({"code": "invoices", "title": "Invoices"}),
        ))
        .await;
    let id = res.json()["item"]["id"].as_str().unwrap().to_string();
    let form = form("sales:order", "o-1", "a.txt", "text/plain", b"hello")
        .text("partitionCode", "invoices");
    uploaded(&h, &admin, form).await;
    let res = h
        .app
        .send(delete(&format!("{PARTITIONS}?id={id}"), &admin))
        .await;
    assert_eq!(res.status, 409);
    assert_eq!(error(&res), "Partition is in use and cannot be removed.");
}

#[actix_web::test]
async fn partition_writes_are_403_while_the_environment_locks_them() {
    let config = AttachmentsConfig {
        partitions_locked: true,
        ..small_config()
    };
    let h = start(config, Storage::memory()).await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    // Reading still works; writes are refused before the body is read.
    assert_eq!(h.app.send(get(PARTITIONS, &admin)).await.status, 200);
    let res = h
        .app
        .send(post_json(PARTITIONS, &admin, json!({"code": "x"})))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(
        error(&res),
        "Attachment partitions are managed by the environment in demo/onboarding mode."
    );
    let res = h.app.send(put_json(PARTITIONS, &admin, json!({}))).await;
    assert_eq!(res.status, 403);
    let res = h
        .app
        .send(delete(&format!("{PARTITIONS}?id=x"), &admin))
        .await;
    assert_eq!(res.status, 403);
}

#[actix_web::test]
async fn the_partition_list_is_kept_until_a_partition_changes() {
    let h = start_default().await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    let (_, first) = h.app.statements(PARTITIONS, &admin).await;
    let (n, again) = h.app.statements(PARTITIONS, &admin).await;
    assert_eq!((n, &again), (1, &first), "a kept partition list");
    let body = json!({"code": "contracts", "title": "Contracts", "storageDriver": "local"});
    let res = h.app.send(post_json(PARTITIONS, &admin, body)).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let (n, after) = h.app.statements(PARTITIONS, &admin).await;
    assert!(n > 1, "recomputed after a new partition ({n} statements)");
    assert_eq!(
        after["items"].as_array().map(Vec::len),
        first["items"].as_array().map(|items| items.len() + 1),
        "{after}"
    );
}
