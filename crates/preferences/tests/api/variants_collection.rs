//! The collection forms of the variant writes (Open Mercato clients):
//! `PUT /auth/sidebar/variants {id, ...}` and `DELETE /auth/sidebar/variants?id=`.

use serde_json::json;
use stoa_auth::testing::token_for;
use stoa_testkit::requests::delete;

use super::support::*;

const VARIANTS: &str = "/api/auth/sidebar/variants";

#[actix_web::test]
async fn variants_update_and_delete_at_the_collection_path() {
    let app = start().await;
    let acme = acme(&app.db).await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(VARIANTS, &admin, json!({"name": "Compact"})))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let id = res.json()["variant"]["id"].as_str().unwrap().to_string();

    let res = app
        .send(put_json(
            VARIANTS,
            &admin,
            json!({"id": id, "name": "Wide"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["variant"]["name"], "Wide");
    let res = app.send(get(&format!("{VARIANTS}/{id}"), &admin)).await;
    assert_eq!(res.json()["variant"]["name"], "Wide");

    // Missing or malformed ids, unknown ids: as the /{id} form answers them.
    let res = app
        .send(put_json(VARIANTS, &admin, json!({"name": "x"})))
        .await;
    assert_eq!(res.status, 400);
    let res = app
        .send(put_json(
            VARIANTS,
            &admin,
            json!({"id": "nope", "name": "x"}),
        ))
        .await;
    assert_eq!(res.status, 400);
    let res = app
        .send(put_json(
            VARIANTS,
            &admin,
            json!({"id": uuid::Uuid::new_v4(), "name": "x"}),
        ))
        .await;
    assert_eq!(res.status, 404);
    // Another user never reaches it.
    let employee = token_for(&app.db, acme.employee).await;
    let res = app
        .send(delete(&format!("{VARIANTS}?id={id}"), &employee))
        .await;
    assert_eq!(res.status, 403, "employees lack auth.sidebar.manage");

    let res = app
        .send(delete(&format!("{VARIANTS}?id={id}"), &admin))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json(), json!({"ok": true}));
    let res = app.send(get(&format!("{VARIANTS}/{id}"), &admin)).await;
    assert_eq!(res.status, 404);
    assert_eq!(app.send(delete(VARIANTS, &admin)).await.status, 400);
}
