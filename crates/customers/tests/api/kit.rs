//! The resource kit (`stoa_acl::resource`) on deals, called as a job or an
//! AI confirm calls it: on the caller's connection, with its AuthContext.

use std::time::Duration;

use actix_web::http::StatusCode;
use diesel_async::AsyncConnection;
use futures_util::FutureExt;
use serde_json::json;
use stoa_acl::AuthContext;
use stoa_acl::accounts::{Creator, CreatorResolver};
use stoa_acl::resource::{self as kit, Write};
use stoa_core::AppError;
use stoa_core::db::Db;
use stoa_customers::commands::deals::UPDATE;
use stoa_customers::model::DealState;
use uuid::Uuid;

use super::support::*;

/// The caller `user` of `tenant`, acting in `organization`, as the server
/// resolves it.
async fn caller(db: &Db, tenant: &Tenant, user: Uuid, organization: Uuid) -> AuthContext {
    let mut conn = db.conn().await.unwrap();
    stoa_auth::PgCreators::new()
        .resolve_creator(
            &mut conn,
            Creator {
                tenant_id: tenant.tenant_id,
                organization_id: Some(organization),
                user_id: Some(user),
                api_key_id: None,
            },
        )
        .await
        .unwrap()
        .unwrap()
}

/// Renames deal `id` through `update_in` in its own transaction, holding
/// the transaction `hold` long after the write.
async fn rename(
    db: &Db,
    ctx: &AuthContext,
    id: Uuid,
    title: &'static str,
    expected: Option<time::OffsetDateTime>,
    hold: Duration,
) -> Result<(), AppError> {
    let mut conn = db.conn().await?;
    conn.transaction(async |conn| {
        let how = Write::new(UPDATE, "Update deal");
        kit::update_in::<DealState, _>(conn, ctx, None, how, id, expected, |_, deal| {
            deal.title = title.into();
            async { Ok(()) }.boxed()
        })
        .await?;
        tokio::time::sleep(hold).await;
        Ok(())
    })
    .await
}

async fn version(db: &Db, id: Uuid) -> time::OffsetDateTime {
    let mut conn = db.conn().await.unwrap();
    stoa_customers::queries::deals::lock(&mut conn, id)
        .await
        .unwrap()
        .unwrap()
        .updated_at
}

#[actix_web::test]
async fn two_concurrent_updates_of_one_version_one_wins_the_other_is_409() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let id = deal(&app, &admin, json!({"title": "Raced"})).await;
    let ctx = caller(&app.db, &acme, acme.admin, acme.organization_id).await;
    let seen = Some(version(&app.db, id).await);
    // The first holds the row lock; the second waits on it, then finds the
    // version it read gone.
    let first = rename(&app.db, &ctx, id, "First", seen, Duration::from_millis(400));
    let second = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        rename(&app.db, &ctx, id, "Second", seen, Duration::ZERO).await
    };
    let (first, second) = tokio::join!(first, second);
    assert!(first.is_ok(), "{first:?}");
    let err = second.unwrap_err();
    assert_eq!(err.status(), StatusCode::CONFLICT);
    assert_eq!(err.code(), Some("optimistic_lock_conflict"));
    assert_eq!(read(&app, &admin, id).await.unwrap()["title"], "First");
}

#[actix_web::test]
async fn a_stale_version_a_missing_feature_and_a_restricted_caller_are_refused() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let id = deal(&app, &admin, json!({"title": "Kept"})).await;
    let stale = time::macros::datetime!(2020-01-01 0:00 UTC);
    let ctx = caller(&app.db, &acme, acme.admin, acme.organization_id).await;
    let err = rename(&app.db, &ctx, id, "Stale", Some(stale), Duration::ZERO)
        .await
        .unwrap_err();
    assert_eq!(err.status(), StatusCode::CONFLICT);

    let viewer = user_with_features(
        &app.db,
        &acme,
        "viewer@acme.com",
        &["customers.deals.view"],
        None,
        None,
    )
    .await;
    let ctx = caller(&app.db, &acme, viewer, acme.organization_id).await;
    let err = rename(&app.db, &ctx, id, "Viewer", None, Duration::ZERO)
        .await
        .unwrap_err();
    assert_eq!(err.status(), StatusCode::FORBIDDEN);

    // An administrator of another organization: the deal does not exist for it.
    let south = child_org(&app.db, &acme, "South").await;
    let limited = user_with_features(
        &app.db,
        &acme,
        "south@acme.com",
        &["customers.*"],
        Some(vec![south]),
        Some(south),
    )
    .await;
    let ctx = caller(&app.db, &acme, limited, south).await;
    let err = rename(&app.db, &ctx, id, "Limited", None, Duration::ZERO)
        .await
        .unwrap_err();
    assert_eq!(err.status(), StatusCode::NOT_FOUND);
    assert_eq!(err.message(), "Deal not found");
    assert_eq!(read(&app, &admin, id).await.unwrap()["title"], "Kept");
}
