//! The verified workspace from its admin's side: sign-in with the password
//! chosen at sign-up, the default dashboard and attachment partitions, and
//! the status page following the demo-data job.

use actix_web::test::TestRequest;

use super::support::*;

fn status_request(tenant: &str, cookie: Option<&str>) -> TestRequest {
    let req = TestRequest::get().uri(&format!("{STATUS}?tenantId={tenant}"));
    match cookie {
        Some(value) => req.insert_header(("cookie", format!("om_login_tenant={value}"))),
        None => req,
    }
}

#[actix_web::test]
async fn the_new_admin_signs_in_and_finds_dashboards_and_partitions() {
    let app = start().await;
    let verified = onboard(&app, "ada@example.com").await;
    let tenant = verified["tenantId"].as_str().unwrap().to_string();

    // The password chosen at sign-up opens the account; a wrong one does not.
    let res = app
        .send(stoa_testkit::requests::form(
            "/api/auth/login",
            "email=ada@example.com&password=wrong-Passw0rd!",
        ))
        .await;
    assert_eq!(res.status, 401, "{}", res.text());
    let res = app
        .send(stoa_testkit::requests::form(
            "/api/auth/login",
            &format!(
                "email=ada@example.com&password={}",
                PASSWORD.replace('!', "%21")
            ),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let token = res.json()["token"].as_str().unwrap().to_string();

    // The display name is the form's first and last name.
    let res = app.send(get("/api/auth/profile", &token)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["name"], "Ada Lovelace", "{}", res.text());

    // The default dashboard: the widgets the admin role was seeded with.
    let res = app.send(get("/api/dashboards/layout", &token)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let layout = res.json();
    assert_eq!(layout["context"]["tenantId"], tenant.as_str());
    let items = layout["layout"]["items"].as_array().unwrap();
    assert!(!items.is_empty(), "{layout}");
    assert!(
        items.iter().any(|i| i["widgetId"] == "dashboards.welcome"),
        "{layout}"
    );

    // The default attachment partitions.
    let res = app.send(get("/api/attachments/partitions", &token)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let codes: Vec<String> = res.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["code"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(codes, ["privateAttachments", "productsMedia"]);
}

#[actix_web::test]
async fn the_status_page_follows_the_demo_data_job() {
    let app = start().await;
    let verified = onboard(&app, "ada@example.com").await;
    let tenant = verified["tenantId"].as_str().unwrap().to_string();

    let res = app.send(status_request(&tenant, Some(&tenant))).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["ok"], true);
    assert_eq!(body["status"], "completed");
    assert_eq!(body["ready"], false);
    assert_eq!(body["preparation"]["status"], "pending");
    assert_eq!(body["preparation"]["totalCount"], 9);
    assert_eq!(
        body["preparation"]["progressJobId"],
        verified["progressJobId"]
    );
    assert!(body["loginUrl"].is_null());

    // The job seeds the demo data into the new workspace, owned by its admin.
    assert!(workers(&app.db).run_one().await.unwrap());
    assert_eq!(
        count(&app.db, &format!("SELECT count(*) AS n FROM customer_deals WHERE tenant_id = '{tenant}' AND owner_user_id = '{}'", verified["userId"].as_str().unwrap())).await,
        5
    );
    assert_eq!(
        count(
            &app.db,
            &format!("SELECT count(*) AS n FROM catalog_products WHERE tenant_id = '{tenant}'")
        )
        .await,
        4
    );
    let res = app.send(status_request(&tenant, Some(&tenant))).await;
    let body = res.json();
    assert_eq!(body["ready"], true, "{body}");
    assert_eq!(body["preparation"]["status"], "completed");
    assert_eq!(body["preparation"]["progressPercent"], 100);
    assert_eq!(body["preparation"]["processedCount"], 9);
    assert_eq!(
        body["loginUrl"],
        format!("{PUBLIC_URL}/login?tenant={tenant}")
    );
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM onboarding_requests WHERE preparation_completed_at IS NOT NULL").await,
        1
    );
}

#[actix_web::test]
async fn the_status_page_is_only_for_the_verifying_client() {
    let app = start().await;
    let verified = onboard(&app, "ada@example.com").await;
    let tenant = verified["tenantId"].as_str().unwrap().to_string();
    let other = uuid::Uuid::new_v4().to_string();

    let res = app.send(status_request(&tenant, None)).await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(res.json()["error"], "Not authorized for this tenant.");
    assert_eq!(
        app.send(status_request(&tenant, Some(&other))).await.status,
        403
    );
    let res = app.send(status_request("not-a-uuid", Some(&tenant))).await;
    assert_eq!(res.status, 400);
    assert_eq!(
        res.json(),
        serde_json::json!({"ok": false, "error": "Invalid tenant id.", "code": "invalid_tenant_id"})
    );
    // A tenant no sign-up created.
    assert_eq!(
        app.send(status_request(&other, Some(&other))).await.status,
        404
    );
    // The `tenant` alias.
    let res = app
        .send(
            TestRequest::get()
                .uri(&format!("{STATUS}?tenant={tenant}"))
                .insert_header(("cookie", format!("om_login_tenant={tenant}"))),
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
}
