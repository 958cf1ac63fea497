//! Tenant isolation and organization selection (cookie and header).

use serde_json::json;
use uuid::Uuid;

use super::support::*;

#[actix_web::test]
async fn a_tenant_never_reads_or_changes_another_tenant() {
    let app = start().await;
    let (acme, globex) = two_tenants(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let foreign = globex.organization_id;

    let res = app
        .send(get(
            &format!("/api/directory/organizations?tenantId={}", globex.tenant_id),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(
        res.json(),
        json!({"error": "Not authorized to target this tenant."})
    );
    let res = app
        .send(get(
            &format!("/api/directory/organizations?ids={foreign}&view=manage"),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["total"], 0);

    let res = app
        .send(put_json(
            "/api/directory/organizations",
            &admin,
            json!({"id": foreign, "name": "Pwned"}),
        ))
        .await;
    assert_eq!(res.status, 404);
    let res = app
        .send(delete(
            &format!("/api/directory/organizations?id={foreign}"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 404);
    let res = app
        .send(post_json(
            "/api/directory/organizations",
            &admin,
            json!({"name": "Implant", "tenantId": globex.tenant_id}),
        ))
        .await;
    assert_eq!(res.status, 403);
    let res = app
        .send(post_json(
            "/api/directory/organizations",
            &admin,
            json!({"name": "Implant", "parentId": foreign}),
        ))
        .await;
    assert_eq!(
        res.status, 400,
        "a foreign parent is not found in the caller's tenant"
    );

    // Globex is untouched.
    let globex_admin = token_for(&app.db, globex.admin).await;
    let res = app
        .send(get(
            "/api/directory/organizations?view=manage",
            &globex_admin,
        ))
        .await;
    assert_eq!(res.json()["total"], 1);
    assert_eq!(res.json()["items"][0]["name"], "Globex");
}

#[actix_web::test]
async fn a_foreign_or_unknown_selection_is_refused_with_422() {
    let app = start().await;
    let (acme, globex) = two_tenants(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    for selection in [
        globex.organization_id.to_string(),
        Uuid::new_v4().to_string(),
        "garbage".into(),
    ] {
        let res = app
            .send(get("/api/directory/organizations", &admin).cookie(
                actix_web::cookie::Cookie::new("om_selected_org", selection.clone()),
            ))
            .await;
        assert_eq!(res.status, 422, "{selection}");
        assert_eq!(res.json()["code"], "organization_selection_invalid");
        assert!(
            res.cookies()
                .iter()
                .any(|c| c.starts_with("om_selected_org=;")),
            "stale cookie is cleared"
        );
        // The selection applies to every module's endpoints.
        let res = app
            .send(
                post_json("/api/auth/feature-check", &admin, json!({"features": []}))
                    .insert_header(("x-om-selected-org", selection.clone())),
            )
            .await;
        assert_eq!(res.status, 422);
        let res = app
            .send(
                get("/api/directory/organizations", &admin)
                    .insert_header(("x-om-selected-org", selection.clone())),
            )
            .await;
        assert_eq!(res.status, 422);
        assert!(
            res.cookies().is_empty(),
            "a header selection sets no cookie"
        );
    }
    let res = app
        .send(
            get("/api/directory/organizations", &admin)
                .insert_header(("x-om-selected-org", "__all__")),
        )
        .await;
    assert_eq!(res.status, 200);
    let res = app
        .send(
            get("/api/directory/organizations", &admin)
                .insert_header(("x-om-selected-org", acme.organization_id.to_string())),
        )
        .await;
    assert_eq!(res.status, 200);
}

#[actix_web::test]
async fn organization_restricted_users_see_and_touch_only_their_subtree() {
    let app = start().await;
    let (acme, _) = two_tenants(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let create = |name: &str, parent: Uuid| {
        post_json(
            "/api/directory/organizations",
            &admin,
            json!({"name": name, "parentId": parent}),
        )
    };
    let sales: Uuid = app.send(create("Sales", acme.organization_id)).await.json()["id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let emea: Uuid = app.send(create("EMEA", sales)).await.json()["id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let ops: Uuid = app.send(create("Ops", acme.organization_id)).await.json()["id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let manager = user_with_features(
        &app.db,
        &acme,
        "m@acme.com",
        &["directory.organizations.*"],
        Some(vec![sales]),
        Some(sales),
    )
    .await;
    let manager = token_for(&app.db, manager).await;
    let res = app
        .send(get("/api/directory/organizations?view=manage", &manager))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let ids: Vec<String> = res.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, vec![sales.to_string(), emea.to_string()]);

    let res = app
        .send(
            get("/api/directory/organizations", &manager)
                .insert_header(("x-om-selected-org", ops.to_string())),
        )
        .await;
    assert_eq!(
        res.status, 422,
        "selecting an organization outside the allowed set never widens access"
    );
    let res = app
        .send(put_json(
            "/api/directory/organizations",
            &manager,
            json!({"id": ops, "name": "Mine"}),
        ))
        .await;
    assert_eq!(res.status, 404);
    let res = app
        .send(post_json(
            "/api/directory/organizations",
            &manager,
            json!({"name": "Rogue", "parentId": ops}),
        ))
        .await;
    assert_eq!(res.status, 403);
    let res = app
        .send(post_json(
            "/api/directory/organizations",
            &manager,
            json!({"name": "APAC", "parentId": sales}),
        ))
        .await;
    assert_eq!(res.status, 201);
}

#[actix_web::test]
async fn super_admins_may_select_another_tenant() {
    let app = start().await;
    let (acme, globex) = two_tenants(&app.db).await;
    let root = token_for(&app.db, acme.superadmin).await;
    let res = app
        .send(
            get("/api/directory/organizations?view=manage", &root).cookie(
                actix_web::cookie::Cookie::new("om_selected_tenant", globex.tenant_id.to_string()),
            ),
        )
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["items"][0]["name"], "Globex");
    let res = app
        .send(
            get("/api/directory/organizations?view=manage", &root)
                .insert_header(("x-om-selected-tenant", Uuid::new_v4().to_string())),
        )
        .await;
    assert_eq!(res.status, 422);
    let res = app
        .send(get(
            "/api/directory/organizations?tenantId=all&view=manage",
            &root,
        ))
        .await;
    assert_eq!(res.json()["total"], 2);
    assert_eq!(res.json()["isSuperAdmin"], true);
    assert_eq!(res.json()["items"][1]["tenantName"], "Globex");

    // A non-super admin's tenant selection is ignored.
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(
            get("/api/directory/organizations?view=manage", &admin)
                .insert_header(("x-om-selected-tenant", globex.tenant_id.to_string())),
        )
        .await;
    assert_eq!(res.json()["items"][0]["name"], "Acme Corp");
}
