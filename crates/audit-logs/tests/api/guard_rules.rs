//! What a rules engine needs of write guards: refusals listing every
//! violation, a tenant filter that skips without asking, and decision logs
//! that outlive the refused write.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_core::AppError;
use stoa_core::command::{GuardInput, Verdict, Violation, WriteGuard};
use uuid::Uuid;

use super::support::*;

/// Rules for the tenants in `ruled` only: an organization name must be
/// short and must not start with "Acme". Logs each decision.
#[derive(Default)]
struct Rules {
    ruled: Mutex<HashSet<Uuid>>,
    checks: AtomicUsize,
}

impl WriteGuard for Rules {
    fn id(&self) -> &str {
        "rules.organizations"
    }
    fn applies_to(&self, command_id: &str, tenant: Option<Uuid>) -> bool {
        command_id.starts_with("directory.organizations.")
            && tenant.is_some_and(|t| self.ruled.lock().unwrap().contains(&t))
    }
    fn check<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        input: &'a GuardInput<'a>,
    ) -> BoxFuture<'a, Result<Verdict, AppError>> {
        Box::pin(async move {
            self.checks.fetch_add(1, Ordering::SeqCst);
            let name = input.after().and_then(|a| a["name"].as_str()).unwrap_or("");
            let mut violations = Vec::new();
            if name.len() > 12 {
                violations.push(
                    Violation::new("Name is longer than 12 characters")
                        .code("name_too_long")
                        .field("name"),
                );
            }
            if name.starts_with("Acme") {
                violations.push(Violation::new("Name may not start with Acme").field("name"));
            }
            input.log(
                "organization rules evaluated",
                Some(json!({"name": name, "failed": violations.len()})),
            );
            Ok(if violations.is_empty() {
                Verdict::Allow
            } else {
                Verdict::Violations(violations)
            })
        })
    }
}

#[derive(diesel::QueryableByName, Debug)]
struct LogRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    guard: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    outcome: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    command_id: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Uuid>)]
    tenant_id: Option<Uuid>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Uuid>)]
    actor_user_id: Option<Uuid>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Jsonb>)]
    data: Option<Value>,
}

async fn guard_logs(db: &stoa_core::db::Db) -> Vec<LogRow> {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(
        "SELECT guard, outcome, command_id, tenant_id, actor_user_id, data \
         FROM guard_logs ORDER BY created_at, id",
    )
    .load(&mut *conn)
    .await
    .unwrap()
}

async fn org_count(db: &stoa_core::db::Db, name: &str) -> i64 {
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query("SELECT count(*) AS n FROM organizations WHERE name = $1")
        .bind::<diesel::sql_types::Text, _>(name)
        .get_result::<N>(&mut *conn)
        .await
        .unwrap()
        .n
}

#[actix_web::test]
async fn a_refusal_lists_every_violation_in_details() {
    let rules = Arc::new(Rules::default());
    let app = start_with_guards(vec![rules.clone()]).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    rules.ruled.lock().unwrap().insert(acme.tenant_id);
    let admin = token_for(&app.db, acme.admin).await;

    let res = app
        .send(post_json(
            "/api/directory/organizations",
            &admin,
            json!({"name": "Acme Research Labs", "parentId": acme.organization_id}),
        ))
        .await;
    assert_eq!(res.status, 422, "{}", res.text());
    let body = res.json();
    assert_eq!(
        body["error"],
        "Refused by guard 'rules.organizations': Name is longer than 12 characters; \
         Name may not start with Acme"
    );
    assert_eq!(body["code"], "guard_refused");
    assert_eq!(
        body["details"],
        json!({
            "guard": "rules.organizations",
            "violations": [
                {"message": "Name is longer than 12 characters", "code": "name_too_long", "field": "name"},
                {"message": "Name may not start with Acme", "field": "name"}
            ]
        })
    );
    assert_eq!(org_count(&app.db, "Acme Research Labs").await, 0);
}

#[actix_web::test]
async fn a_guard_skips_tenants_without_rules_before_checking() {
    let rules = Arc::new(Rules::default());
    let app = start_with_guards(vec![rules.clone()]).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    rules.ruled.lock().unwrap().insert(acme.tenant_id);
    let globex_admin = token_for(&app.db, globex.admin).await;
    let acme_admin = token_for(&app.db, acme.admin).await;

    // Globex has no rules: the guard is not even asked, and the name passes.
    create_org(
        &app,
        &globex_admin,
        json!({"name": "Acme-like Subsidiary", "parentId": globex.organization_id}),
    )
    .await;
    assert_eq!(AtomicUsize::load(&rules.checks, Ordering::SeqCst), 0);
    assert!(guard_logs(&app.db).await.is_empty());
    // Acme has: the same name is checked and refused.
    let res = app
        .send(post_json(
            "/api/directory/organizations",
            &acme_admin,
            json!({"name": "Acme-like Subsidiary", "parentId": acme.organization_id}),
        ))
        .await;
    assert_eq!(res.status, 422);
    assert_eq!(AtomicUsize::load(&rules.checks, Ordering::SeqCst), 1);
}

#[actix_web::test]
async fn what_a_guard_logs_survives_its_refusal_and_commits_with_an_allowed_write() {
    let rules = Arc::new(Rules::default());
    let app = start_with_guards(vec![rules.clone()]).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    rules.ruled.lock().unwrap().insert(acme.tenant_id);
    let admin = token_for(&app.db, acme.admin).await;

    let res = app
        .send(post_json(
            "/api/directory/organizations",
            &admin,
            json!({"name": "Acme Labs", "parentId": acme.organization_id}),
        ))
        .await;
    assert_eq!(res.status, 422);
    // The write rolled back; the guard's log of why did not.
    assert_eq!(org_count(&app.db, "Acme Labs").await, 0);
    let logs = guard_logs(&app.db).await;
    assert_eq!(logs.len(), 1, "{logs:?}");
    let refused = &logs[0];
    assert_eq!(
        (
            refused.guard.as_str(),
            refused.outcome.as_str(),
            refused.command_id.as_str()
        ),
        (
            "rules.organizations",
            "refused",
            "directory.organizations.create"
        )
    );
    assert_eq!(refused.tenant_id, Some(acme.tenant_id));
    assert_eq!(refused.actor_user_id, Some(acme.admin));
    assert_eq!(
        refused.data,
        Some(json!({"name": "Acme Labs", "failed": 1}))
    );

    // An allowed write's log commits with it.
    create_org(
        &app,
        &admin,
        json!({"name": "Sales", "parentId": acme.organization_id}),
    )
    .await;
    let logs = guard_logs(&app.db).await;
    assert_eq!(logs.len(), 2);
    assert_eq!(logs[1].outcome, "allowed");
    assert_eq!(logs[1].data, Some(json!({"name": "Sales", "failed": 0})));
}
