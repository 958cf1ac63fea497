//! Conversation participants: sharing with a user of the same tenant (who
//! may then read, never change), the typed refusals, revoking (back to
//! private), restoring a revoked row, the events, tenant isolation.

use actix_web::test::TestRequest;
use serde_json::{Value, json};
use stoa_testkit::outbox_events_named;
use stoa_testkit::requests::patch_json;

use super::support::*;

const CONVERSATIONS: &str = "/api/ai_assistant/ai/conversations";

fn participants(key: &str) -> String {
    format!("{CONVERSATIONS}/{key}/participants")
}

#[actix_web::test]
async fn a_shared_conversation_is_readable_by_the_participant_until_revoked() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let owner = token_for(&app.db, acme.employee).await;
    let admin = token_for(&app.db, acme.admin).await;
    let reader = user_with_features(
        &app.db,
        &acme,
        "reader@acme.com",
        &["ai_assistant.view"],
        None,
        None,
    )
    .await;
    let reader_token = token_for(&app.db, reader).await;
    let res = app
        .send(post_json(
            CONVERSATIONS,
            &owner,
            json!({"agentId": "customers.deal_analyzer", "conversationId": "shared-1"}),
        ))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let url = participants("shared-1");

    // Only the owner's row at first.
    let res = app.send(get(&url, &owner)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["ownerUserId"], json!(acme.employee));
    assert_eq!(body["participants"].as_array().unwrap().len(), 1);
    assert_eq!(body["participants"][0]["role"], "owner");
    assert!(body["participants"][0]["addedAt"].is_string());
    assert_eq!(
        app.send(get(&format!("{CONVERSATIONS}/shared-1"), &reader_token))
            .await
            .status,
        404
    );

    let res = app
        .send(post_json(&url, &owner, json!({"userId": reader})))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert_eq!(res.json()["participant"]["userId"], json!(reader));
    assert_eq!(res.json()["participant"]["role"], "viewer");
    let res = app
        .send(post_json(&url, &owner, json!({"userId": reader})))
        .await;
    assert_eq!(res.status, 409);
    assert_eq!(res.json()["code"], "duplicate_participant");

    // The participant reads it (get and list) but cannot change it.
    let res = app
        .send(get(&format!("{CONVERSATIONS}/shared-1"), &reader_token))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["conversation"]["isOwner"], false);
    assert_eq!(res.json()["conversation"]["visibility"], "shared");
    assert_eq!(res.json()["conversation"]["participantCount"], 1);
    let res = app.send(get(CONVERSATIONS, &reader_token)).await;
    assert_eq!(res.json()["items"][0]["conversationId"], "shared-1");
    let res = app
        .send(patch_json(
            &format!("{CONVERSATIONS}/shared-1"),
            &reader_token,
            json!({"title": "Mine now"}),
        ))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(
        app.send(delete(&format!("{CONVERSATIONS}/shared-1"), &reader_token))
            .await
            .status,
        404
    );
    let res = app.send(get(&url, &reader_token)).await;
    assert_eq!(res.status, 403);
    assert_eq!(res.json()["code"], "forbidden");
    // A manager lists them.
    let res = app.send(get(&url, &admin)).await;
    assert_eq!(res.status, 200);
    let users: Vec<Value> = res.json()["participants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["userId"].clone())
        .collect();
    assert_eq!(users, [json!(acme.employee), json!(reader)]);

    // Revoking: the participant needs the share feature; the owner's row
    // stays; the last one gone makes it private again.
    let one = format!("{url}/{reader}");
    assert_eq!(app.send(delete(&one, &reader_token)).await.status, 403);
    let res = app
        .send(delete(&format!("{url}/{}", acme.employee), &owner))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(res.json()["code"], "forbidden");
    let res = app.send(delete(&format!("{url}/not-a-uuid"), &owner)).await;
    assert_eq!(res.status, 400);
    let res = app
        .send(delete(
            &format!("{}/{reader}", participants("missing")),
            &owner,
        ))
        .await;
    assert_eq!(res.status, 403);
    let res = app.send(delete(&one, &owner)).await;
    assert_eq!(res.status, 204, "{}", res.text());
    let res = app.send(delete(&one, &owner)).await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["code"], "participant_not_found");
    assert_eq!(
        app.send(get(&format!("{CONVERSATIONS}/shared-1"), &reader_token))
            .await
            .status,
        404
    );
    let res = app
        .send(get(&format!("{CONVERSATIONS}/shared-1"), &owner))
        .await;
    assert_eq!(res.json()["conversation"]["visibility"], "private");
    assert_eq!(res.json()["conversation"]["participantCount"], 0);

    // Shared again: the revoked row comes back.
    let res = app
        .send(post_json(&url, &owner, json!({"userId": reader})))
        .await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert_eq!(
        app.send(get(&format!("{CONVERSATIONS}/shared-1"), &reader_token))
            .await
            .status,
        200
    );
    let res = app.send(get(&url, &owner)).await;
    assert_eq!(res.json()["participants"].as_array().unwrap().len(), 2);

    let shared = outbox_events_named(&app.db, "ai_assistant.conversation.shared").await;
    assert_eq!(shared.len(), 2);
    assert_eq!(
        shared[0]["payload"],
        json!({
            "conversationId": "shared-1",
            "tenantId": acme.tenant_id,
            "organizationId": acme.organization_id,
            "ownerUserId": acme.employee,
            "participantUserId": reader,
            "role": "viewer",
        })
    );
    let unshared = outbox_events_named(&app.db, "ai_assistant.conversation.unshared").await;
    assert_eq!(unshared.len(), 1);
    assert_eq!(unshared[0]["payload"]["participantUserId"], json!(reader));
}

#[actix_web::test]
async fn sharing_refuses_bad_input_strangers_and_other_tenants() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let owner = token_for(&app.db, acme.employee).await;
    let admin = token_for(&app.db, acme.admin).await;
    let globex_admin = token_for(&app.db, globex.admin).await;
    let viewer = user_with_features(
        &app.db,
        &acme,
        "viewer@acme.com",
        &["ai_assistant.view"],
        None,
        None,
    )
    .await;
    let viewer_token = token_for(&app.db, viewer).await;
    let res = app
        .send(post_json(
            CONVERSATIONS,
            &owner,
            json!({"agentId": "customers.deal_analyzer", "conversationId": "c-1"}),
        ))
        .await;
    assert_eq!(res.status, 201);
    let url = participants("c-1");

    let res = app.send(TestRequest::get().uri(&url)).await;
    assert_eq!(res.status, 401);
    let res = app
        .send(
            TestRequest::post()
                .uri(&url)
                .set_json(json!({"userId": viewer})),
        )
        .await;
    assert_eq!(res.status, 401);

    for (body, code) in [
        (json!({}), "validation_error"),
        (json!({"userId": "nope"}), "validation_error"),
        (
            json!({"userId": viewer, "role": "owner"}),
            "validation_error",
        ),
        (json!({"userId": acme.employee}), "self_share_not_allowed"),
        (json!({"userId": globex.admin}), "user_not_found"),
        (json!({"userId": uuid::Uuid::new_v4()}), "user_not_found"),
    ] {
        let res = app.send(post_json(&url, &owner, body.clone())).await;
        assert_eq!(res.status, 400, "{body}: {}", res.text());
        if code != "validation_error" {
            assert_eq!(res.json()["code"], code, "{body}");
        }
    }
    // Without the share feature; not the owner (a manager neither); missing.
    let res = app
        .send(post_json(
            &url,
            &viewer_token,
            json!({"userId": acme.admin}),
        ))
        .await;
    assert_eq!(res.status, 403);
    let res = app
        .send(post_json(&url, &admin, json!({"userId": viewer})))
        .await;
    assert_eq!(res.status, 404);
    let res = app
        .send(post_json(
            &participants("missing"),
            &owner,
            json!({"userId": viewer}),
        ))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["code"], "conversation_not_found");
    assert_eq!(
        app.send(get(&participants("missing"), &owner)).await.status,
        404
    );

    // Another tenant sees nothing of it.
    assert_eq!(app.send(get(&url, &globex_admin)).await.status, 404);
    let res = app
        .send(post_json(
            &url,
            &globex_admin,
            json!({"userId": globex.employee}),
        ))
        .await;
    assert_eq!(res.status, 404);
    let res = app
        .send(post_json(&url, &owner, json!({"userId": viewer})))
        .await;
    assert_eq!(res.status, 201);
    let res = app
        .send(delete(&format!("{url}/{viewer}"), &globex_admin))
        .await;
    assert_eq!(res.status, 403);
    // A manager of the tenant may revoke (the spec: owner or manager).
    let res = app.send(delete(&format!("{url}/{viewer}"), &admin)).await;
    assert_eq!(res.status, 204, "{}", res.text());
}
