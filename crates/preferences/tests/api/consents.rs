//! User consents: recording through the service, listing with integrity
//! verification, tampering, tenant isolation, bad input.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_auth::AuthConfig;
use stoa_auth::testing::{token_for, user_with_features};
use stoa_core::db::Db;
use stoa_preferences::consents::{self, ConsentChange, ConsentKey};
use uuid::Uuid;

use super::support::*;

fn url(user: Uuid) -> String {
    format!("/api/auth/users/consents?userId={user}")
}

async fn give(db: &Db, user: Uuid, tenant: Uuid, kind: &str, granted: bool, source: &str) {
    let key = ConsentKey::derive(AuthConfig::for_tests().jwt_secret.expose());
    let mut conn = db.conn().await.unwrap();
    consents::record(
        &mut conn,
        &key,
        ConsentChange {
            user_id: user,
            tenant_id: Some(tenant),
            organization_id: None,
            consent_type: kind.into(),
            granted,
            source: Some(source.into()),
            ip_address: Some("203.0.113.7".into()),
        },
    )
    .await
    .unwrap();
}

#[actix_web::test]
async fn consents_are_listed_newest_first_with_their_integrity() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    give(
        &app.db,
        acme.employee,
        acme.tenant_id,
        "terms",
        true,
        "onboarding",
    )
    .await;
    give(
        &app.db,
        acme.employee,
        acme.tenant_id,
        "marketing",
        true,
        "onboarding",
    )
    .await;
    give(
        &app.db,
        acme.employee,
        acme.tenant_id,
        "marketing",
        false,
        "profile",
    )
    .await;

    let res = app.send(get(&url(acme.employee), &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["ok"], true);
    let items = body["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    let marketing = &items[0];
    assert_eq!(marketing["consentType"], "marketing");
    assert_eq!(marketing["isGranted"], false);
    assert!(
        marketing["grantedAt"].is_string(),
        "withdrawal keeps when it was granted"
    );
    assert!(marketing["withdrawnAt"].is_string());
    assert_eq!(marketing["source"], "profile");
    assert_eq!(marketing["ipAddress"], "203.0.113.7");
    assert_eq!(marketing["integrityValid"], true);
    let terms = &items[1];
    assert_eq!(terms["consentType"], "terms");
    assert_eq!(terms["isGranted"], true);
    assert_eq!(terms["withdrawnAt"], Value::Null);
    assert_eq!(terms["integrityValid"], true);
    let mut keys: Vec<&String> = terms.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        vec![
            "consentType",
            "createdAt",
            "grantedAt",
            "id",
            "integrityValid",
            "ipAddress",
            "isGranted",
            "source",
            "updatedAt",
            "withdrawnAt"
        ]
    );

    // A change made behind the API's back shows.
    {
        use stoa_preferences::consents::schema::user_consents;
        let mut conn = app.db.conn().await.unwrap();
        diesel::update(user_consents::table.filter(user_consents::consent_type.eq("terms")))
            .set(user_consents::is_granted.eq(false))
            .execute(&mut *conn)
            .await
            .unwrap();
    }
    let body = app.send(get(&url(acme.employee), &admin)).await.json();
    assert_eq!(body["items"][0]["integrityValid"], true);
    assert_eq!(body["items"][1]["consentType"], "terms");
    assert_eq!(body["items"][1]["integrityValid"], false);

    // Granting again re-signs the record.
    give(
        &app.db,
        acme.employee,
        acme.tenant_id,
        "terms",
        true,
        "support",
    )
    .await;
    let body = app.send(get(&url(acme.employee), &admin)).await.json();
    assert!(
        body["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["integrityValid"] == true)
    );

    // A user without consents has an empty list.
    let body = app.send(get(&url(acme.admin), &admin)).await.json();
    assert_eq!(body, json!({"ok": true, "items": []}));
}

#[actix_web::test]
async fn consents_refuse_bad_ids_and_other_tenants() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let globex = stoa_auth::testing::seed_tenant(&app.db, "Globex", "globex.com").await;
    give(
        &app.db,
        globex.employee,
        globex.tenant_id,
        "terms",
        true,
        "onboarding",
    )
    .await;
    let admin = token_for(&app.db, acme.admin).await;

    for query in ["", "?userId=", "?userId=nope", "?userId=123"] {
        let res = app
            .send(get(&format!("/api/auth/users/consents{query}"), &admin))
            .await;
        assert_eq!(res.status, 400, "{query}");
        assert_eq!(res.json(), json!({"ok": false, "error": "Invalid userId"}));
    }
    // Another tenant's user is not found, exactly like a user that does not exist.
    let foreign = app.send(get(&url(globex.employee), &admin)).await;
    let missing = app.send(get(&url(Uuid::new_v4()), &admin)).await;
    assert_eq!(
        (foreign.status.as_u16(), missing.status.as_u16()),
        (404, 404)
    );
    assert_eq!(
        foreign.json(),
        json!({"ok": false, "error": "User not found"})
    );
    assert_eq!(foreign.body, missing.body);

    // Globex's admin sees them.
    let globex_admin = token_for(&app.db, globex.admin).await;
    let body = app
        .send(get(&url(globex.employee), &globex_admin))
        .await
        .json();
    assert_eq!(body["items"].as_array().unwrap().len(), 1);

    // Users outside the caller's organizations are out of reach too.
    let branch = {
        use stoa_directory::DirectoryService;
        let mut conn = app.db.conn().await.unwrap();
        stoa_directory::PgDirectory
            .create_organization(
                &mut conn,
                acme.tenant_id,
                serde_json::from_value(json!({"name": "Branch", "parentId": acme.organization_id}))
                    .unwrap(),
            )
            .await
            .unwrap()
    };
    let branch_editor = user_with_features(
        &app.db,
        &acme,
        "branch@acme.com",
        &["auth.users.edit"],
        Some(vec![branch]),
        Some(branch),
    )
    .await;
    let branch_editor = token_for(&app.db, branch_editor).await;
    let res = app.send(get(&url(acme.employee), &branch_editor)).await;
    assert_eq!(res.status, 404);
}
