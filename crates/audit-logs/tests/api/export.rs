use serde_json::json;

use super::support::*;

#[actix_web::test]
async fn csv_export_has_the_reference_columns_and_defused_cells() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (sales, _) = create_org(
        &app,
        &admin,
        json!({"name": "Sales", "parentId": acme.organization_id}),
    )
    .await;
    app.send(put_json(
        "/api/directory/organizations",
        &admin,
        json!({"id": sales, "name": "=HYPERLINK(\"x\")"}),
    ))
    .await;

    let res = app
        .send(
            get(
                "/api/audit_logs/audit-logs/actions/export?actionType=edit",
                &admin,
            )
            .insert_header(("accept-encoding", "gzip")),
        )
        .await;
    assert_eq!(res.status, 200);
    // A streamed download is never compressed (rows go out as rendered).
    assert_eq!(res.header("content-encoding"), None);
    assert_eq!(res.header("content-type"), Some("text/csv; charset=utf-8"));
    assert_eq!(
        res.header("content-disposition"),
        Some("attachment; filename=\"changelog-export.csv\"")
    );
    let text = res.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "When,User,Action,Field,Old Value,New Value,Source"
    );
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[1].contains(",admin@acme.com,Edit,name,Sales,\"'=HYPERLINK(\"\"x\"\")\",API"),
        "{}",
        lines[1]
    );

    let res = app
        .send(get("/api/audit_logs/audit-logs/actions/export", &admin))
        .await;
    let text = res.text();
    assert!(text.lines().count() >= 3, "{text}");
    // Above the cap is capped (the spec's limits table), not refused.
    let capped = app
        .send(get(
            "/api/audit_logs/audit-logs/actions/export?limit=1001",
            &admin,
        ))
        .await;
    assert_eq!(capped.status, 200, "{}", capped.text());
    assert_eq!(capped.text(), text);
    let huge = app
        .send(get(
            "/api/audit_logs/audit-logs/actions/export?limit=99999999",
            &admin,
        ))
        .await;
    assert_eq!(huge.status, 200);
    assert_eq!(
        app.send(get(
            "/api/audit_logs/audit-logs/actions/export?limit=0",
            &admin
        ))
        .await
        .status,
        400
    );
    let res = app
        .send(get(
            "/api/audit_logs/audit-logs/actions/export?limit=1",
            &admin,
        ))
        .await;
    assert_eq!(res.text().lines().count(), 2);
}
