//! The attacker names a record so that the action-log export, opened in a
//! spreadsheet by an administrator, runs a formula: full-width starters and
//! `|` slipped past the ASCII-only defusing.

use serde_json::json;

use super::support::*;

#[actix_web::test]
async fn full_width_and_pipe_formulas_are_defused_in_the_export() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (org, _) = create_org(
        &app,
        &admin,
        json!({"name": "Sales", "parentId": acme.organization_id}),
    )
    .await;
    let payloads = [
        "\u{FF1D}HYPERLINK(\"https://evil.example\";\"Open\")",
        "\u{FF0B}1",
        "\u{FF0D}1",
        "\u{FF20}SUM(A1)",
        "|calc",
    ];
    for name in payloads {
        let res = app
            .send(put_json(
                "/api/directory/organizations",
                &admin,
                json!({"id": org, "name": name}),
            ))
            .await;
        assert_eq!(res.status, 200, "{name}: {}", res.text());
    }
    let res = app
        .send(get(
            "/api/audit_logs/audit-logs/actions/export?actionType=edit",
            &admin,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let text = res.text();
    for name in payloads {
        let quoted = name.replace('"', "\"\"");
        // Defused: a leading quote makes the cell text, wherever it appears.
        assert!(
            text.contains(&format!(",'{name},")) || text.contains(&format!(",\"'{quoted}\"")),
            "{name} not defused:\n{text}"
        );
        assert!(
            !text.contains(&format!(",{name},")) && !text.contains(&format!(",\"{quoted}\"")),
            "{name} left as a formula:\n{text}"
        );
    }
    // The legitimate path: ordinary names pass unchanged.
    let res = app
        .send(put_json(
            "/api/directory/organizations",
            &admin,
            json!({"id": org, "name": "Sales = Revenue"}),
        ))
        .await;
    assert_eq!(res.status, 200);
    let text = app
        .send(get(
            "/api/audit_logs/audit-logs/actions/export?actionType=edit",
            &admin,
        ))
        .await
        .text();
    assert!(text.contains(",Sales = Revenue,"), "{text}");
}
