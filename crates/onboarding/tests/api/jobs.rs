//! The recurring prune of expired requests (through the job schedule).

use super::support::*;

async fn request(db: &stoa_core::db::Db, email: &str, expires: &str) {
    exec(
        db,
        &format!(
            "INSERT INTO onboarding_requests (email, token_hash, first_name, last_name, \
             organization_name, password_hash, expires_at) \
             VALUES ('{email}', md5('{email}'), 'A', 'B', 'C', 'hash', now() + interval '{expires}')"
        ),
    )
    .await;
}

#[actix_web::test]
async fn expired_requests_are_pruned_by_the_recurring_job() {
    let app = start().await;
    request(&app.db, "long-expired@example.com", "-2 days").await;
    request(&app.db, "just-expired@example.com", "-1 hour").await;
    request(&app.db, "fresh@example.com", "20 hours").await;
    // A completed request stays, however old its link.
    onboard(&app, "done@example.com").await;
    exec(
        &app.db,
        "UPDATE onboarding_requests SET expires_at = now() - interval '3 days' WHERE email = 'done@example.com'",
    )
    .await;

    let schedules = stoa_onboarding::schedules();
    assert_eq!(schedules.len(), 1);
    let workers = workers(&app.db).with_schedules(schedules);
    workers.register_schedules().await.unwrap();
    assert_eq!(workers.enqueue_due().await.unwrap(), 1);
    // The demo-data job of the verification runs first, then the prune.
    while workers.run_one().await.unwrap() {}

    let mut conn = app.db.conn().await.unwrap();
    let left: Vec<String> = {
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        stoa_onboarding::schema::onboarding_requests::table
            .select(stoa_onboarding::schema::onboarding_requests::email)
            .order(stoa_onboarding::schema::onboarding_requests::email)
            .load(&mut *conn)
            .await
            .unwrap()
    };
    assert_eq!(
        left,
        [
            "done@example.com",
            "fresh@example.com",
            "just-expired@example.com"
        ]
    );
    // Idempotent.
    assert_eq!(
        stoa_onboarding::jobs::prune_expired(&mut conn, stoa_onboarding::jobs::KEEP_EXPIRED_HOURS)
            .await
            .unwrap(),
        0
    );
}
