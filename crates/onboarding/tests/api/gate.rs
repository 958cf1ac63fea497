//! Disabled (the default), every onboarding route answers 404 `{ok:false,
//! error}` and does nothing.

use serde_json::json;
use stoa_onboarding::OnboardingConfig;

use super::support::*;

#[actix_web::test]
async fn every_route_is_404_when_onboarding_is_disabled() {
    let app = start_with(OnboardingConfig::default()).await;
    let expected = json!({
        "ok": false,
        "error": "Self-service onboarding is disabled.",
        "code": "onboarding_disabled",
    });
    let res = submit(&app, &form("ada@example.com")).await;
    assert_eq!(res.status, 404, "{}", res.text());
    assert_eq!(res.json(), expected);
    // Even a body that is not JSON: the gate comes first.
    let res = app
        .send(
            actix_web::test::TestRequest::post()
                .uri(SUBMIT)
                .insert_header(("content-type", "application/json"))
                .set_payload("{\"broken"),
        )
        .await;
    assert_eq!(res.status, 404);
    let res = verify(&app, &"a".repeat(64)).await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json(), expected);
    let res = app
        .get(&format!("{STATUS}?tenantId={}", uuid::Uuid::new_v4()))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json(), expected);
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM onboarding_requests").await,
        0
    );
    assert!(mails_to(&app.db, "ada@example.com").await.is_empty());
}
