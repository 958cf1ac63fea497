//! Issue 49's attachments findings, replayed from the attacker's side: an
//! admin restricted to a sibling organization, another tenant's admin and
//! anonymous clients. Every test checks the victim's rows and files are as
//! they were.

use actix_web::test::TestRequest;
use serde_json::json;
use stoa_attachments::AttachmentsConfig;
use stoa_core::rate_limit::Rule;
use stoa_core::storage::Storage;
use stoa_testkit::requests::bearer;
use uuid::Uuid;

use super::support::*;

/// Every feature an organization's admin holds here.
const ADMIN: &[&str] = &["attachments.*", "catalog.*", "customers.*"];

/// Acme with two sibling organizations and an admin restricted to each.
struct Siblings {
    acme: Tenant,
    north: Uuid,
    south: Uuid,
    /// The attacker: restricted to `north`.
    north_admin: String,
    /// The victim: restricted to `south`.
    south_admin: String,
    /// Acme's unrestricted admin.
    admin: String,
}

async fn siblings<S: stoa_testkit::AppService>(h: &Harness<S>) -> Siblings {
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let root = acme.organization_id;
    let north = organization(h.db(), acme.tenant_id, root, "North").await;
    let south = organization(h.db(), acme.tenant_id, root, "South").await;
    let restricted = async |email: &str, org: Uuid| {
        let user =
            user_with_features(h.db(), &acme, email, ADMIN, Some(vec![org]), Some(org)).await;
        token_for(h.db(), user).await
    };
    let north_admin = restricted("north@acme.com", north).await;
    let south_admin = restricted("south@acme.com", south).await;
    let admin = token_for(h.db(), acme.admin).await;
    Siblings {
        acme,
        north,
        south,
        north_admin,
        south_admin,
        admin,
    }
}

fn codes(res: &stoa_testkit::TestResponse) -> Vec<String> {
    res.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["code"].as_str().unwrap().to_string())
        .collect()
}

#[actix_web::test]
async fn a_sibling_organization_admin_cannot_list_change_or_delete_its_partitions() {
    let h = start_default().await;
    let s = siblings(&h).await;
    let res = h
        .app
        .send(post_json(
            PARTITIONS,
            &s.south_admin,
            json!({"code": "southFiles", "title": "South files"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let partition = res.json()["item"]["id"].as_str().unwrap().to_string();
    let secret = uploaded(
        &h,
        &s.south_admin,
        form("x:y", "r", "s.txt", "text/plain", b"south secret")
            .text("partitionCode", "southFiles"),
    )
    .await;
    let before = partition_row(h.db(), &partition).await;
    assert_eq!(before.organization_id, Some(s.south));

    // The attack of the finding: make the victim's partition public.
    let res = h.app.send(get(PARTITIONS, &s.north_admin)).await;
    assert_eq!(res.status, 200);
    assert!(
        !codes(&res).contains(&"southFiles".to_string()),
        "{:?}",
        codes(&res)
    );
    let res = h
        .app
        .send(get("/api/attachments/library", &s.north_admin))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let summary: Vec<_> = res.json()["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["code"].clone())
        .collect();
    assert!(summary.contains(&json!("productsMedia")), "{summary:?}");
    assert!(!summary.contains(&json!("southFiles")), "{summary:?}");
    let res = h
        .app
        .send(put_json(
            PARTITIONS,
            &s.north_admin,
            json!({"id": partition, "code": "southFiles", "title": "Mine", "isPublic": true}),
        ))
        .await;
    assert_eq!(res.status, 404, "{}", res.text());
    assert_eq!(error(&res), "Partition not found");
    let res = h
        .app
        .send(delete(
            &format!("{PARTITIONS}?id={partition}"),
            &s.north_admin,
        ))
        .await;
    assert_eq!(res.status, 404);
    // Another tenant's admin fares no better.
    let globex = seed(h.db(), "Globex", "globex.com").await;
    let foreign = token_for(h.db(), globex.admin).await;
    let res = h
        .app
        .send(put_json(
            PARTITIONS,
            &foreign,
            json!({"id": partition, "code": "southFiles", "title": "Mine", "isPublic": true}),
        ))
        .await;
    assert_eq!(res.status, 404);
    assert!(!codes(&h.app.send(get(PARTITIONS, &foreign)).await).contains(&"southFiles".into()));

    assert_eq!(partition_row(h.db(), &partition).await, before);
    let file = format!("/api/attachments/file/{secret}");
    assert_eq!(h.app.send(anonymous(&file)).await.status, 401);
    let res = h.app.send(get(&file, &s.south_admin)).await;
    assert_eq!(&res.body[..], b"south secret");

    // Its own organization's partitions stay the attacker's to change, and
    // the victim and the tenant's admin keep theirs.
    let res = h
        .app
        .send(post_json(
            PARTITIONS,
            &s.north_admin,
            json!({"code": "northFiles", "title": "North files"}),
        ))
        .await;
    let own = res.json()["item"]["id"].as_str().unwrap().to_string();
    let res = h
        .app
        .send(put_json(
            PARTITIONS,
            &s.north_admin,
            json!({"id": own, "code": "northFiles", "title": "Ours"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(
        codes(&h.app.send(get(PARTITIONS, &s.south_admin)).await).contains(&"southFiles".into())
    );
    assert!(
        !codes(&h.app.send(get(PARTITIONS, &s.south_admin)).await).contains(&"northFiles".into())
    );
    let res = h
        .app
        .send(get("/api/attachments/library", &s.south_admin))
        .await;
    let summary = res.json()["partitions"].clone();
    assert!(
        summary
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["code"] == "southFiles"),
        "{summary}"
    );
    let all = codes(&h.app.send(get(PARTITIONS, &s.admin)).await);
    assert!(all.contains(&"southFiles".into()) && all.contains(&"northFiles".into()));
}

#[actix_web::test]
async fn a_tenant_wide_partition_is_read_only_for_a_restricted_admin() {
    let h = start_default().await;
    let s = siblings(&h).await;
    let res = h
        .app
        .send(post_json(
            PARTITIONS,
            &s.admin,
            json!({"code": "shared", "title": "Shared"}),
        ))
        .await;
    let shared = res.json()["item"]["id"].as_str().unwrap().to_string();
    exec(
        h.db(),
        &format!("UPDATE attachment_partitions SET organization_id = NULL WHERE id = '{shared}'"),
    )
    .await;
    let before = partition_row(h.db(), &shared).await;

    assert!(codes(&h.app.send(get(PARTITIONS, &s.north_admin)).await).contains(&"shared".into()));
    let res = h
        .app
        .send(put_json(
            PARTITIONS,
            &s.north_admin,
            json!({"id": shared, "code": "shared", "title": "Taken", "isPublic": true}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(res.json()["code"], "organization_out_of_scope");
    let res = h
        .app
        .send(delete(&format!("{PARTITIONS}?id={shared}"), &s.north_admin))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(partition_row(h.db(), &shared).await, before);

    // A restricted admin cannot create one either (it could not change it).
    let root = user_with_features(
        h.db(),
        &s.acme,
        "nowhere@acme.com",
        ADMIN,
        Some(vec![s.north]),
        None,
    )
    .await;
    exec(
        h.db(),
        &format!("UPDATE users SET organization_id = NULL WHERE id = '{root}'"),
    )
    .await;
    let nowhere = token_for(h.db(), root).await;
    let res = h
        .app
        .send(post_json(
            PARTITIONS,
            &nowhere,
            json!({"code": "floating", "title": "Floating"}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
}

/// The bounded image config of the variant tests.
fn bounded(max_variants: usize, renders: u32) -> AttachmentsConfig {
    AttachmentsConfig {
        max_variants_per_image: max_variants,
        renders_per_client: Rule {
            limit: renders,
            ..Rule::per_minute(renders)
        },
        ..small_config()
    }
}

fn from(ip: &str, path: &str) -> TestRequest {
    anonymous(path).peer_addr(format!("{ip}:40000").parse().unwrap())
}

#[actix_web::test]
async fn anonymous_variants_are_not_upscaled_capped_per_image_and_throttled_per_address() {
    let h = start(bounded(3, 5), Storage::memory()).await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    let chair = product(h.db(), acme.tenant_id, acme.organization_id).await;
    let original = png(100, 60);
    let id = uploaded(
        &h,
        &admin,
        form(
            "catalog:catalog_product",
            &chair,
            "c.png",
            "image/png",
            &original,
        ),
    )
    .await;
    let image = |w: u32, h: u32| format!("/api/attachments/image/{id}/c.png?width={w}&height={h}");

    // No upscaling: the largest box gives at most the original's pixels.
    let res = h.app.send(from("10.0.0.1", &image(4000, 4000))).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let img = image::load_from_memory(&res.body).unwrap();
    assert_eq!((img.width(), img.height()), (60, 60));
    let res = h
        .app
        .send(from(
            "10.0.0.1",
            &format!("/api/attachments/image/{id}?width=4000&cropType=contain"),
        ))
        .await;
    let img = image::load_from_memory(&res.body).unwrap();
    assert_eq!((img.width(), img.height()), (100, 60));

    // Sizes past the cap render (throttled) but are not kept: the image
    // never holds more than three variants.
    for w in [10, 11, 12] {
        let res = h.app.send(from("10.0.0.1", &image(w, w))).await;
        assert_eq!(res.status, 200, "{w}: {}", res.text());
    }
    assert_eq!(h.renderer.renders(), 5);
    assert_eq!(
        objects(&h.storage).await.len(),
        1 + 3,
        "the original and three variants"
    );

    // The sixth miss from this address is refused before any rendering...
    let res = h.app.send(from("10.0.0.1", &image(13, 13))).await;
    assert_eq!(res.status, 429, "{}", res.text());
    assert!(res.header("retry-after").is_some());
    assert_eq!(h.renderer.renders(), 5);
    // ...while stored variants are still served to it, without a render.
    let res = h.app.send(from("10.0.0.1", &image(4000, 4000))).await;
    assert_eq!(res.status, 200);
    assert_eq!(h.renderer.renders(), 5);
    // Another address has its own budget.
    let res = h.app.send(from("10.0.0.2", &image(13, 13))).await;
    assert_eq!(res.status, 200);
    assert_eq!(objects(&h.storage).await.len(), 1 + 3);

    // The victim's row and original are untouched.
    let res = h
        .app
        .send(anonymous(&format!("/api/attachments/file/{id}")))
        .await;
    assert_eq!(&res.body[..], &original[..]);
    assert_eq!(row(h.db(), &id).await.file_size, original.len() as i64);
}

#[actix_web::test]
async fn a_configured_list_of_sizes_refuses_others() {
    let config = AttachmentsConfig {
        image_sizes: Some(vec![32, 64]),
        ..small_config()
    };
    let h = start(config, Storage::memory()).await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    let chair = product(h.db(), acme.tenant_id, acme.organization_id).await;
    let id = uploaded(
        &h,
        &admin,
        form(
            "catalog:catalog_product",
            &chair,
            "c.png",
            "image/png",
            &png(100, 100),
        ),
    )
    .await;
    let res = h
        .app
        .send(anonymous(&format!("/api/attachments/image/{id}?width=65")))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(error(&res), "Invalid size parameters");
    let res = h
        .app
        .send(anonymous(&format!(
            "/api/attachments/image/{id}?width=64&height=32"
        )))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(h.renderer.renders(), 1);
    assert_eq!(objects(&h.storage).await.len(), 2);
}

#[actix_web::test]
async fn a_sibling_organization_admin_cannot_attach_to_or_transfer_onto_its_deals() {
    let h = start_default().await;
    let s = siblings(&h).await;
    let victim_deal = deal(h.db(), s.acme.tenant_id, s.south).await;
    let own_deal = deal(h.db(), s.acme.tenant_id, s.north).await;
    let listed = async |token: &str, record: &str| {
        let res = h
            .app
            .send(get(
                &format!("{UPLOAD}?entityId=customers:customer_deal&recordId={record}"),
                token,
            ))
            .await;
        res.json()["items"].as_array().unwrap().len()
    };
    let victims = uploaded(
        &h,
        &s.south_admin,
        form(
            "customers:customer_deal",
            &victim_deal,
            "v.txt",
            "text/plain",
            b"contract",
        ),
    )
    .await;
    let victim_before = row(h.db(), &victims).await;
    assert_eq!(victim_before.organization_id, s.south);

    let rows = count_rows(h.db()).await;
    let stored = objects(&h.storage).await.len();
    let res = upload(
        &h,
        &s.north_admin,
        form(
            "customers:customer_deal",
            &victim_deal,
            "x.txt",
            "text/plain",
            b"planted",
        ),
    )
    .await;
    assert_eq!(res.status, 404, "{}", res.text());
    assert!(
        error(&res)
            .as_str()
            .unwrap()
            .starts_with("Record not found")
    );
    assert_eq!(count_rows(h.db()).await, rows);
    assert_eq!(
        objects(&h.storage).await.len(),
        stored,
        "the refused file is gone"
    );

    // Its own deal takes files, then moving them onto the victim's is 404.
    let mine = uploaded(
        &h,
        &s.north_admin,
        form(
            "customers:customer_deal",
            &own_deal,
            "m.txt",
            "text/plain",
            b"mine",
        ),
    )
    .await;
    let mine_before = row(h.db(), &mine).await;
    assert_eq!(mine_before.organization_id, s.north);
    let res = h
        .app
        .send(post_json(
            "/api/attachments/transfer",
            &s.north_admin,
            json!({"entityId": "customers:customer_deal", "attachmentIds": [mine],
                   "toRecordId": victim_deal}),
        ))
        .await;
    assert_eq!(res.status, 404, "{}", res.text());
    assert_eq!(
        error(&res),
        "Record not found: toRecordId must name an existing record of entityId in your organizations."
    );
    assert_eq!(row(h.db(), &mine).await, mine_before);
    // Another tenant's admin neither.
    let globex = seed(h.db(), "Globex", "globex.com").await;
    let foreign = token_for(h.db(), globex.admin).await;
    let res = upload(
        &h,
        &foreign,
        form(
            "customers:customer_deal",
            &victim_deal,
            "x.txt",
            "text/plain",
            b"planted",
        ),
    )
    .await;
    assert_eq!(res.status, 404, "{}", res.text());

    assert_eq!(listed(&s.south_admin, &victim_deal).await, 1);
    assert_eq!(listed(&s.admin, &victim_deal).await, 1);
    assert_eq!(row(h.db(), &victims).await, victim_before);

    // The tenant's admin may move the north file onto the south deal: it
    // then belongs to the deal's organization.
    let res = h
        .app
        .send(post_json(
            "/api/attachments/transfer",
            &s.admin,
            json!({"entityId": "customers:customer_deal", "attachmentIds": [mine],
                   "toRecordId": victim_deal}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let moved = row(h.db(), &mine).await;
    assert_eq!(
        (moved.organization_id, moved.record_id),
        (s.south, victim_deal.clone())
    );
    // An unrestricted upload goes to the record's organization, not the uploader's.
    let res = uploaded(
        &h,
        &s.admin,
        form(
            "customers:customer_deal",
            &victim_deal,
            "a.txt",
            "text/plain",
            b"by admin",
        ),
    )
    .await;
    assert_eq!(row(h.db(), &res).await.organization_id, s.south);
}

#[actix_web::test]
async fn made_up_or_unreachable_products_get_no_public_media() {
    let h = start_default().await;
    let s = siblings(&h).await;
    let south_chair = product(h.db(), s.acme.tenant_id, s.south).await;
    let image = png(8, 8);
    let media = |record: &str| {
        form(
            "catalog:catalog_product",
            record,
            "p.png",
            "image/png",
            &image,
        )
    };

    // A made-up product id, in any form, is 404 and leaves nothing behind.
    for record in ["made-up".to_string(), Uuid::new_v4().to_string()] {
        let res = upload(&h, &s.admin, media(&record)).await;
        assert_eq!(res.status, 404, "{record}: {}", res.text());
    }
    // Another organization's product: 404 for the sibling admin.
    let res = upload(&h, &s.north_admin, media(&south_chair)).await;
    assert_eq!(res.status, 404, "{}", res.text());
    // Another tenant's product: 404.
    let globex = seed(h.db(), "Globex", "globex.com").await;
    let foreign = token_for(h.db(), globex.admin).await;
    let res = upload(&h, &foreign, media(&south_chair)).await;
    assert_eq!(res.status, 404, "{}", res.text());
    // attachments.manage alone does not reach products: 403.
    let files_only = user_with_features(
        h.db(),
        &s.acme,
        "files@acme.com",
        &["attachments.*"],
        None,
        None,
    )
    .await;
    let files_only = token_for(h.db(), files_only).await;
    let res = upload(&h, &files_only, media(&south_chair)).await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(count_rows(h.db()).await, 0);
    assert!(objects(&h.storage).await.is_empty());

    // An entity no module declares never goes public, even when its default
    // partition was made public by a super admin.
    let root = token_for(h.db(), s.acme.superadmin).await;
    let res = h.app.send(get(PARTITIONS, &root)).await;
    let private = res.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["code"] == "privateAttachments")
        .unwrap()["id"]
        .clone();
    let res = h
        .app
        .send(put_json(
            PARTITIONS,
            &root,
            json!({"id": private, "code": "privateAttachments", "title": "Open", "isPublic": true}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = upload(
        &h,
        &s.admin,
        form("customers:person", "p-1", "a.txt", "text/plain", b"x"),
    )
    .await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(
        error(&res),
        "Files of this entity type cannot go to a public storage partition."
    );
    assert_eq!(count_rows(h.db()).await, 0);

    // The victim's own product takes media, in its organization.
    let id = uploaded(&h, &s.south_admin, media(&south_chair)).await;
    let stored = row(h.db(), &id).await;
    assert_eq!(
        (stored.organization_id, stored.partition_code.as_str()),
        (s.south, "productsMedia")
    );
    let res = h
        .app
        .send(bearer(
            TestRequest::get().uri(&format!("/api/attachments/file/{id}")),
            &s.north_admin,
        ))
        .await;
    assert_eq!(res.status, 404, "a sibling still does not see it signed in");
}
