//! The attacker names a role or a user so that it reads as another one:
//! `superadmin` followed by a zero-width space, full-width letters, a
//! right-to-left override. Such names are refused (400 naming the field) or,
//! for roles, folded to their plain form (NFKC) before the checks.

use serde_json::json;

use super::support::*;

#[actix_web::test]
async fn role_names_that_hide_or_fake_characters_are_refused() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let root = stoa_auth::testing::token_for(&app.db, acme.superadmin).await;
    for (name, shown) in [
        ("superadmin\u{200B}", "U+200B"),
        ("super\u{200D}admin", "U+200D"),
        ("admin\u{202E}nimda", "U+202E"),
        ("Sales\u{2066}", "U+2066"),
        ("ad\u{00AD}min", "U+00AD"),
        ("admin\u{3164}", "U+3164"),
        ("Sales\nTeam", "U+000A"),
    ] {
        let res = app
            .send(post_json("/api/auth/roles", &root, json!({"name": name})))
            .await;
        assert_eq!(res.status, 400, "{name:?}: {}", res.text());
        let field = res.json()["details"]["fieldErrors"]["name"][0].clone();
        assert_eq!(
            field,
            format!("must not contain invisible, control or formatting characters ({shown})"),
            "{}",
            res.text()
        );
    }
    // Full-width letters fold to the reserved name.
    let res = app
        .send(post_json(
            "/api/auth/roles",
            &root,
            json!({"name": "\u{FF53}\u{FF55}\u{FF50}\u{FF45}\u{FF52}\u{FF41}\u{FF44}\u{FF4D}\u{FF49}\u{FF4E}"}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(res.json()["error"], "Role name is reserved");

    // A rename is held to the same rules.
    let res = app
        .send(post_json(
            "/api/auth/roles",
            &root,
            json!({"name": "Field  Team"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let id = res.json()["id"].as_str().unwrap().to_string();
    let res = app
        .send(put_json(
            "/api/auth/roles",
            &root,
            json!({"id": id, "name": "Field Team\u{200B}"}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    // The legitimate path: stored folded (one space), listed by that name,
    // and a second "Ｆｉｅｌｄ Team" is the same name.
    let res = app.send(get("/api/auth/roles?search=Field", &root)).await;
    assert_eq!(
        res.json()["items"][0]["name"],
        "Field Team",
        "{}",
        res.text()
    );
    let res = app
        .send(post_json(
            "/api/auth/roles",
            &root,
            json!({"name": "\u{FF26}\u{FF49}\u{FF45}\u{FF4C}\u{FF44} Team"}),
        ))
        .await;
    assert_eq!(res.status, 409, "{}", res.text());
}

#[actix_web::test]
async fn user_names_with_hidden_characters_are_refused() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let root = stoa_auth::testing::token_for(&app.db, acme.superadmin).await;
    let create = |name: &str| {
        post_json(
            "/api/auth/users",
            &root,
            json!({
                "email": format!("u{}@acme.com", name.len()),
                "name": name,
                "password": "Val1d!passw0rd",
                "organizationId": acme.organization_id,
            }),
        )
    };
    let res = app.send(create("Super Admin\u{200B}")).await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert_eq!(res.json()["issues"][0]["path"], json!(["name"]));
    assert_eq!(res.json()["issues"][0]["code"], "hidden_character");
    let res = app
        .send(put_json(
            "/api/auth/users",
            &root,
            json!({"id": acme.employee, "name": "Admin\u{202E}"}),
        ))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());

    // The legitimate path: names in any script, with accents and spaces.
    let res = app.send(create("Zoë Ångström-山田")).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let res = app
        .send(put_json(
            "/api/auth/users",
            &root,
            json!({"id": acme.employee, "name": "Ana María"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
}
