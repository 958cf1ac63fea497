//! Signing in with a key: header forms, expiry, deletion, the creator's
//! liveness and grants, caching, `lastUsedAt`, database outages.

use std::sync::Arc;

use actix_web::test::TestRequest;
use serde_json::json;
use stoa_api_keys::ApiKeyAuthenticator;

use super::support::*;

#[actix_web::test]
async fn every_header_form_signs_in() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let reader = role(&app.db, acme.tenant_id, "reader", &["api_keys.view"], None).await;
    let secret = key_with_roles(&app, &admin, &[reader]).await;

    let forms = [
        ("x-api-key", get_x_api_key(KEYS, &secret)),
        ("ApiKey scheme", get_apikey_scheme(KEYS, &secret)),
        ("bearer", get(KEYS, &secret)),
        (
            "lower-case scheme",
            TestRequest::get()
                .uri(KEYS)
                .insert_header(("authorization", format!("apikey {secret}"))),
        ),
    ];
    for (form, req) in forms {
        let res = app.send(req).await;
        assert_eq!(res.status, 200, "{form}: {}", res.text());
        assert_eq!(res.json()["total"], 1, "{form}");
    }
}

#[actix_web::test]
async fn malformed_unknown_and_wrong_secrets_are_401() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let reader = role(&app.db, acme.tenant_id, "reader", &["api_keys.view"], None).await;
    let secret = key_with_roles(&app, &admin, &[reader]).await;
    let (prefix, body) = secret.split_once('.').unwrap();
    let flipped = format!(
        "{prefix}.{}{}",
        &body[..47],
        if body.ends_with('0') { '1' } else { '0' }
    );
    let cases = [
        ("right prefix, wrong secret", flipped),
        ("unknown prefix", format!("omk_00000000.{body}")),
        (
            "upper-case",
            secret.to_uppercase().replacen("OMK_", "omk_", 1),
        ),
        ("truncated", secret[..60].to_string()),
        ("too long", format!("{secret}0")),
        ("no dot", secret.replace('.', "")),
        ("garbage", "omk_.".to_string()),
    ];
    for (why, value) in cases {
        assert_unauthorized(&app.send(get_x_api_key(KEYS, &value)).await, why);
        assert_unauthorized(&app.send(get_apikey_scheme(KEYS, &value)).await, why);
    }
    // The real one still works.
    assert_eq!(app.send(get_x_api_key(KEYS, &secret)).await.status, 200);
}

#[actix_web::test]
async fn a_limited_key_may_use_what_its_roles_grant_and_nothing_else() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let reader = role(
        &app.db,
        acme.tenant_id,
        "reader",
        &["api_keys.view", "directory.organizations.view"],
        None,
    )
    .await;
    let secret = key_with_roles(&app, &admin, &[reader]).await;

    let res = app.send(get(KEYS, &secret)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let res = app
        .send(get("/api/directory/organizations?view=options", &secret))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());

    let res = app
        .send(post_json(KEYS, &secret, json!({"name": "escalate"})))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(
        res.json(),
        json!({"error": "Forbidden", "requiredFeatures": ["api_keys.create"]})
    );
    let res = app
        .send(delete(
            &format!("{KEYS}?id={}", uuid::Uuid::new_v4()),
            &secret,
        ))
        .await;
    assert_eq!(res.status, 403);
    let res = app.send(get("/api/auth/features", &secret)).await;
    assert_eq!(res.status, 403, "auth.acl.manage is not granted");
}

#[actix_web::test]
async fn an_expired_key_is_401() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let reader = role(&app.db, acme.tenant_id, "reader", &["api_keys.view"], None).await;
    let soon = (time::OffsetDateTime::now_utc() + time::Duration::hours(1))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let key = create_key(
        &app,
        &admin,
        json!({"name": "short-lived", "roles": [reader], "expiresAt": soon}),
    )
    .await;
    let secret = key["secret"].as_str().unwrap();
    assert_eq!(app.send(get(KEYS, secret)).await.status, 200);

    // Time passes: the expiry is now behind us.
    sql(
        &app.db,
        &format!(
            "UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = '{}'",
            key["id"].as_str().unwrap()
        ),
    )
    .await;
    assert_unauthorized(&app.send(get(KEYS, secret)).await, "expired");
    assert_unauthorized(&app.send(get_x_api_key(KEYS, secret)).await, "expired");
}

#[actix_web::test]
async fn a_deleted_key_is_401_on_the_next_request() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let reader = role(&app.db, acme.tenant_id, "reader", &["api_keys.view"], None).await;
    let key = create_key(&app, &admin, json!({"name": "k", "roles": [reader]})).await;
    let secret = key["secret"].as_str().unwrap();
    // Warm the ACL cache first: deletion must not hide behind it.
    assert_eq!(app.send(get(KEYS, secret)).await.status, 200);
    assert_eq!(app.send(get(KEYS, secret)).await.status, 200);
    let res = app
        .send(delete(
            &format!("{KEYS}?id={}", key["id"].as_str().unwrap()),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_unauthorized(&app.send(get(KEYS, secret)).await, "deleted");
}

#[actix_web::test]
async fn a_deleted_or_deactivated_creator_disables_the_key() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let maker = user_with_features(
        &app.db,
        &acme,
        "maker@acme.com",
        &["api_keys.*"],
        None,
        None,
    )
    .await;
    let token = token_for(&app.db, maker).await;
    let reader = role(&app.db, acme.tenant_id, "reader", &["api_keys.view"], None).await;
    let secret = key_with_roles(&app, &token, &[reader]).await;
    assert_eq!(app.send(get(KEYS, &secret)).await.status, 200);

    sql(
        &app.db,
        &format!("UPDATE users SET is_active = false WHERE id = '{maker}'"),
    )
    .await;
    assert_unauthorized(&app.send(get(KEYS, &secret)).await, "deactivated");
    sql(
        &app.db,
        &format!("UPDATE users SET is_active = true WHERE id = '{maker}'"),
    )
    .await;
    assert_eq!(app.send(get(KEYS, &secret)).await.status, 200);

    sql(
        &app.db,
        &format!("UPDATE users SET deleted_at = now() WHERE id = '{maker}'"),
    )
    .await;
    assert_unauthorized(&app.send(get(KEYS, &secret)).await, "soft-deleted");

    // A hard delete is not blocked by the keys, and disables them too.
    sql(&app.db, &format!("DELETE FROM users WHERE id = '{maker}'")).await;
    assert_unauthorized(&app.send(get(KEYS, &secret)).await, "hard-deleted");
}

#[actix_web::test]
async fn a_key_shrinks_with_its_creator_on_the_next_request() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let maker = user_with_features(
        &app.db,
        &acme,
        "maker@acme.com",
        &["api_keys.*", "directory.organizations.view"],
        None,
        None,
    )
    .await;
    let maker_role = role_of(&app.db, maker).await;
    let token = token_for(&app.db, maker).await;
    let key_role = role(
        &app.db,
        acme.tenant_id,
        "integration",
        &["api_keys.view", "directory.organizations.view"],
        None,
    )
    .await;
    let secret = key_with_roles(&app, &token, &[key_role]).await;
    let wanted = ["api_keys.view", "directory.organizations.view"];
    assert_eq!(granted(&app, &secret, &wanted).await, wanted);
    let orgs = "/api/directory/organizations?view=options";
    assert_eq!(app.send(get(orgs, &secret)).await.status, 200);

    // The creator loses a feature; the key's own role is unchanged.
    set_role_features(&app.db, maker_role, &["api_keys.*"]).await;
    assert_eq!(granted(&app, &secret, &wanted).await, ["api_keys.view"]);
    assert_eq!(app.send(get(orgs, &secret)).await.status, 403);
    assert_eq!(app.send(get(KEYS, &secret)).await.status, 200);

    // A wildcard on the creator's side still bounds the key exactly.
    set_role_features(&app.db, maker_role, &["api_keys.view"]).await;
    assert_eq!(granted(&app, &secret, &wanted).await, ["api_keys.view"]);
    set_role_features(&app.db, maker_role, &[]).await;
    assert!(granted(&app, &secret, &wanted).await.is_empty());
    assert_eq!(app.send(get(KEYS, &secret)).await.status, 403);

    // Given back, the key regains it.
    set_role_features(&app.db, maker_role, &["*"]).await;
    assert_eq!(granted(&app, &secret, &wanted).await, wanted);
}

#[actix_web::test]
async fn a_key_stays_inside_its_creators_organizations() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let root = acme.organization_id;
    let east = organization(&app.db, acme.tenant_id, root, "East").await;
    let west = organization(&app.db, acme.tenant_id, root, "West").await;
    let admin = token_for(&app.db, acme.admin).await;
    for (name, org) in [("east key", east), ("west key", west)] {
        create_key(&app, &admin, json!({"name": name, "organizationId": org})).await;
    }
    let maker = user_with_features(
        &app.db,
        &acme,
        "maker@acme.com",
        &["api_keys.*"],
        None,
        Some(root),
    )
    .await;
    let maker_role = role_of(&app.db, maker).await;
    let token = token_for(&app.db, maker).await;
    // An unrestricted role: on its own the key would see the whole tenant.
    let reader = role(&app.db, acme.tenant_id, "reader", &["api_keys.view"], None).await;
    let secret = key_with_roles(&app, &token, &[reader]).await;
    let names = |res: &stoa_testkit::TestResponse| -> Vec<String> {
        let mut names: Vec<String> = res.json()["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["name"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    };
    let res = app.send(get(KEYS, &secret)).await;
    assert_eq!(names(&res), ["east key", "test key", "west key"]);

    // The creator is restricted to East: so is the key, at once.
    set_role_organizations(&app.db, maker_role, Some(vec![east])).await;
    let res = app.send(get(KEYS, &secret)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(names(&res), ["east key"]);
    // And it cannot select its way out.
    let res = app
        .send(get(KEYS, &secret).insert_header(("x-om-selected-org", west.to_string())))
        .await;
    assert_eq!(res.status, 422, "{}", res.text());
    assert_eq!(res.json()["code"], "organization_selection_invalid");
}

#[actix_web::test]
async fn a_super_admin_creator_imposes_no_bound_and_a_super_admin_key_may_select_a_tenant() {
    let (app, _) = start().await;
    let (acme, globex) = two_tenants(&app.db).await;
    let superadmin = token_for(&app.db, acme.superadmin).await;
    let globex_admin = token_for(&app.db, globex.admin).await;
    create_key(&app, &globex_admin, json!({"name": "globex key"})).await;

    let admin_key = create_key(
        &app,
        &superadmin,
        json!({"name": "admin key", "roles": ["admin"]}),
    )
    .await;
    let secret = admin_key["secret"].as_str().unwrap();
    assert_eq!(
        granted(&app, secret, &["auth.users.list", "directory.tenants.view"]).await,
        ["auth.users.list"],
        "the admin role's grants, no more"
    );

    let super_key = create_key(
        &app,
        &superadmin,
        json!({"name": "super key", "roles": ["superadmin"]}),
    )
    .await;
    let secret = super_key["secret"].as_str().unwrap();
    assert_eq!(
        granted(&app, secret, &["directory.tenants.view", "x.y"]).await,
        ["directory.tenants.view", "x.y"]
    );
    let res = app
        .send(
            get(KEYS, secret).insert_header(("x-om-selected-tenant", globex.tenant_id.to_string())),
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let items = res.json()["items"].clone();
    assert_eq!(items.as_array().unwrap().len(), 1);
    assert_eq!(items[0]["name"], "globex key");

    // A non-super key's tenant selection is ignored.
    let res = app
        .send(
            get(KEYS, admin_key["secret"].as_str().unwrap())
                .insert_header(("x-om-selected-tenant", globex.tenant_id.to_string())),
        )
        .await;
    assert_eq!(res.status, 200);
    assert!(
        res.json()["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["name"] != "globex key")
    );

    // Once its creator is no longer a super admin, neither is the key.
    sql(
        &app.db,
        &format!(
            "DELETE FROM user_roles WHERE user_id = '{}'",
            acme.superadmin
        ),
    )
    .await;
    assert!(
        granted(&app, secret, &["directory.tenants.view"])
            .await
            .is_empty()
    );
}

#[actix_web::test]
async fn a_cached_key_request_makes_one_database_round_trip() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let reader = role(&app.db, acme.tenant_id, "reader", &["api_keys.view"], None).await;
    let secret = key_with_roles(&app, &admin, &[reader]).await;
    let check = json!({"features": ["api_keys.view", "api_keys.create"]});
    let res = app
        .send(post_json("/api/auth/feature-check", &secret, check.clone()))
        .await;
    assert_eq!(res.status, 200);
    for _ in 0..3 {
        let before = stoa_core::db::thread_queries();
        let res = app
            .send(post_json("/api/auth/feature-check", &secret, check.clone()))
            .await;
        assert_eq!(res.status, 200);
        assert_eq!(res.json()["granted"], json!(["api_keys.view"]));
        assert_eq!(
            stoa_core::db::thread_queries() - before,
            1,
            "one round trip per cached key request"
        );
    }
    // A malformed key costs none.
    let before = stoa_core::db::thread_queries();
    let res = app
        .send(post_json("/api/auth/feature-check", "omk_nope.nope", check))
        .await;
    assert_eq!(res.status, 401);
    assert_eq!(stoa_core::db::thread_queries() - before, 0);
}

#[actix_web::test]
async fn last_used_at_is_written_by_the_flush() {
    let (app, keys) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let reader = role(&app.db, acme.tenant_id, "reader", &["api_keys.view"], None).await;
    let secret = key_with_roles(&app, &admin, &[reader]).await;
    let last_used =
        |app_res: stoa_testkit::TestResponse| app_res.json()["items"][0]["lastUsedAt"].clone();

    assert_eq!(last_used(app.send(get(KEYS, &admin)).await), json!(null));
    assert_eq!(keys.flush().await.unwrap(), 0, "nothing used yet");
    for _ in 0..3 {
        assert_eq!(app.send(get(KEYS, &secret)).await.status, 200);
    }
    // Uses are coalesced in memory: nothing written yet.
    assert_eq!(keys.pending_uses(), 1);
    assert_eq!(last_used(app.send(get(KEYS, &admin)).await), json!(null));

    assert_eq!(keys.flush().await.unwrap(), 1);
    assert_eq!(keys.pending_uses(), 0);
    let stamp = last_used(app.send(get(KEYS, &admin)).await);
    let at = time::OffsetDateTime::parse(
        stamp.as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    assert!((time::OffsetDateTime::now_utc() - at).abs() < time::Duration::minutes(5));
}

#[actix_web::test]
async fn a_failed_flush_keeps_the_uses_and_an_unchecked_key_records_none() {
    let db = stoa_core::db::Db::from_url(
        "postgres://postgres@127.0.0.1:1/none",
        1,
        std::time::Duration::from_millis(300),
    )
    .unwrap();
    let keys = ApiKeyAuthenticator::new(db, Arc::new(stoa_auth::PgAccounts));
    let creds = stoa_acl::Credentials {
        api_key: Some(format!("omk_0123abcd.{}", "a".repeat(48))),
        ..Default::default()
    };
    let err = stoa_acl::Authenticator::authenticate(keys.as_ref(), &creds)
        .await
        .unwrap_err();
    assert_eq!(err.status(), 503);
    assert_eq!(
        keys.pending_uses(),
        0,
        "nothing recorded for an unchecked key"
    );

    let (a, b) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
    let now = time::OffsetDateTime::now_utc();
    keys.record_use(a, now);
    keys.record_use(b, now);
    keys.record_use(a, now + time::Duration::seconds(1));
    assert_eq!(keys.pending_uses(), 2, "uses of one key coalesce");
    assert_eq!(keys.flush().await.unwrap_err().status(), 503);
    assert_eq!(keys.pending_uses(), 2, "kept for the next flush");
}

#[actix_web::test]
async fn an_unreachable_database_is_503_for_keys_like_for_sessions() {
    let app = stoa_testkit::app()
        .unreachable_database()
        .module_with(|db| {
            let keys = ApiKeyAuthenticator::new(db.clone(), Arc::new(stoa_auth::PgAccounts));
            auth_module(db, keys)
        })
        .module(stoa_api_keys::configure(
            Arc::new(stoa_auth::PgAccounts),
            Arc::new(stoa_directory::PgDirectory),
        ))
        .start()
        .await;
    let secret = format!("omk_0123abcd.{}", "a".repeat(48));
    let res = app.send(get(KEYS, &secret)).await;
    assert_eq!(res.status, 503, "{}", res.text());
    let res = app.send(get_x_api_key(KEYS, &secret)).await;
    assert_eq!(res.status, 503);
}

#[actix_web::test]
async fn a_valid_session_wins_over_a_key_and_a_bad_token_falls_back_to_it() {
    let (app, _) = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee = token_for(&app.db, acme.employee).await;
    let reader = role(&app.db, acme.tenant_id, "reader", &["api_keys.view"], None).await;
    let secret = key_with_roles(&app, &admin, &[reader]).await;
    // The employee's session (no api_keys.view) is used, not the key.
    let res = app
        .send(get(KEYS, &employee).insert_header(("x-api-key", secret.as_str())))
        .await;
    assert_eq!(res.status, 403);
    // A broken bearer token falls back to the key.
    let res = app
        .send(get(KEYS, "not-a-jwt").insert_header(("x-api-key", secret.as_str())))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
}
