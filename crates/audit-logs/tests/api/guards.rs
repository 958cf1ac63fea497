//! Write guards refuse commands, undo and redo inside their transaction:
//! nothing of a refused write is stored (change, action log, outbox).

use std::sync::{Arc, Mutex};

use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_core::AppError;
use stoa_core::command::{
    self, Actor, Command, Event, GuardInput, LogEntry, Phase, Verdict, WriteGuard, WriteGuards,
};
use stoa_testkit::count;
use uuid::Uuid;

use super::support::*;

/// What a guard saw of one write.
#[derive(Clone, Debug)]
struct Seen {
    command_id: String,
    phase: Phase,
    tenant: Option<Uuid>,
    organization: Option<Uuid>,
    user: Option<Uuid>,
    principal: bool,
    kind: Option<String>,
    id: Option<String>,
    before: Option<Value>,
    after: Option<Value>,
}

/// Refuses any write leaving a resource named `Forbidden...`, undo and redo
/// leaving one named `NoHistory...`, and every write in `frozen` tenants.
#[derive(Default)]
struct Names {
    seen: Mutex<Vec<Seen>>,
    frozen: Mutex<Vec<Uuid>>,
}

impl WriteGuard for Names {
    fn id(&self) -> &str {
        "test.names"
    }
    fn applies_to(&self, command_id: &str, _tenant: Option<Uuid>) -> bool {
        !command_id.starts_with("test.ignored.")
    }
    fn check<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        input: &'a GuardInput<'a>,
    ) -> BoxFuture<'a, Result<Verdict, AppError>> {
        Box::pin(async move {
            // Guards run on the write's connection, inside its transaction.
            let one: i32 = diesel::dsl::sql::<diesel::sql_types::Integer>("SELECT 1")
                .get_result(conn)
                .await?;
            assert_eq!(one, 1);
            self.seen.lock().unwrap().push(Seen {
                command_id: input.command_id.to_string(),
                phase: input.phase,
                tenant: input.tenant_id(),
                organization: input.organization_id(),
                user: input.actor.user_id,
                principal: input.actor.principal.is_some(),
                kind: input.resource_kind().map(String::from),
                id: input.resource_id().map(String::from),
                before: input.before().cloned(),
                after: input.after().cloned(),
            });
            if input
                .tenant_id()
                .is_some_and(|t| self.frozen.lock().unwrap().contains(&t))
            {
                return Ok(Verdict::Refuse("Tenant is frozen".into()));
            }
            let name = input.after().and_then(|a| a["name"].as_str()).unwrap_or("");
            if name.starts_with("Forbidden") {
                return Ok(Verdict::Refuse("Name not allowed".into()));
            }
            if input.phase != Phase::Execute && name.starts_with("NoHistory") {
                return Ok(Verdict::Refuse("History is locked".into()));
            }
            Ok(Verdict::Allow)
        })
    }
}

async fn log_and_outbox(db: &stoa_core::db::Db) -> (i64, i64) {
    (
        count(db, "SELECT count(*) FROM action_logs").await,
        count(db, "SELECT count(*) FROM event_outbox").await,
    )
}

fn assert_refused(res: &stoa_testkit::TestResponse, message: &str) {
    assert_eq!(res.status, 422, "{}", res.text());
    let body = res.json();
    assert_eq!(
        body["error"],
        format!("Refused by guard 'test.names': {message}")
    );
    assert_eq!(body["code"], "guard_refused");
    assert_eq!(body["guard"], "test.names");
    assert_eq!(
        body["details"],
        json!({"guard": "test.names", "violations": [{"message": message}]})
    );
}

#[actix_web::test]
async fn a_refused_command_stores_nothing_and_answers_422_naming_the_guard() {
    let guard = Arc::new(Names::default());
    let app = start_with_guards(vec![guard.clone()]).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let before = log_and_outbox(&app.db).await;

    let res = app
        .send(post_json(
            "/api/directory/organizations",
            &admin,
            json!({"name": "Forbidden Inc", "parentId": acme.organization_id}),
        ))
        .await;
    assert_refused(&res, "Name not allowed");
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) FROM organizations WHERE name = 'Forbidden Inc'"
        )
        .await,
        0
    );
    assert_eq!(log_and_outbox(&app.db).await, before);

    // The guard saw the whole write: command, caller, resource, snapshots.
    let seen = guard.seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(seen.command_id, "directory.organizations.create");
    assert_eq!(seen.phase, Phase::Execute);
    assert_eq!(seen.tenant, Some(acme.tenant_id));
    assert_eq!(seen.user, Some(acme.admin));
    assert!(seen.organization.is_some());
    assert!(seen.principal, "the guard sees the caller's principal");
    assert_eq!(seen.kind.as_deref(), Some("directory.organization"));
    assert!(seen.id.is_some());
    assert_eq!(seen.before, None);
    assert_eq!(seen.after.unwrap()["name"], "Forbidden Inc");

    // An allowed write goes through and is logged.
    let (sales, _) = create_org(
        &app,
        &admin,
        json!({"name": "Sales", "parentId": acme.organization_id}),
    )
    .await;
    assert_eq!(log_and_outbox(&app.db).await.0, before.0 + 1);

    // An update to a refused state leaves the record as it was.
    let res = app
        .send(put_json(
            "/api/directory/organizations",
            &admin,
            json!({"id": sales, "name": "Forbidden Sales"}),
        ))
        .await;
    assert_refused(&res, "Name not allowed");
    assert_eq!(org(&app, &admin, sales).await.unwrap()["name"], "Sales");
    let seen = guard.seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(seen.command_id, "directory.organizations.update");
    assert_eq!(seen.before.unwrap()["name"], "Sales");
    assert_eq!(seen.id, Some(sales.to_string()));
    assert_eq!(log_and_outbox(&app.db).await.0, before.0 + 1);
}

#[actix_web::test]
async fn guards_see_the_tenant_and_refuse_only_where_they_decide_to() {
    let guard = Arc::new(Names::default());
    let app = start_with_guards(vec![guard.clone()]).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    guard.frozen.lock().unwrap().push(globex.tenant_id);
    let acme_admin = token_for(&app.db, acme.admin).await;
    let globex_admin = token_for(&app.db, globex.admin).await;

    let res = app
        .send(post_json(
            "/api/directory/organizations",
            &globex_admin,
            json!({"name": "Research", "parentId": globex.organization_id}),
        ))
        .await;
    assert_refused(&res, "Tenant is frozen");
    create_org(
        &app,
        &acme_admin,
        json!({"name": "Research", "parentId": acme.organization_id}),
    )
    .await;
}

#[actix_web::test]
async fn undo_and_redo_pass_the_guards_too() {
    let guard = Arc::new(Names::default());
    let app = start_with_guards(vec![guard.clone()]).await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;

    // Undo would restore a name the guard refuses in history.
    let (ops, _) = create_org(
        &app,
        &admin,
        json!({"name": "NoHistory Ops", "parentId": acme.organization_id}),
    )
    .await;
    let res = app
        .send(put_json(
            "/api/directory/organizations",
            &admin,
            json!({"id": ops, "name": "Operations"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let rename = operation(&res);
    let before = log_and_outbox(&app.db).await;
    let res = undo(&app, &admin, &rename["undoToken"]).await;
    assert_refused(&res, "History is locked");
    assert_eq!(org(&app, &admin, ops).await.unwrap()["name"], "Operations");
    assert_eq!(log_and_outbox(&app.db).await, before);
    let seen = guard.seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(seen.phase, Phase::Undo);
    assert_eq!(seen.command_id, "directory.organizations.update");
    assert_eq!(seen.before.unwrap()["name"], "Operations");
    assert_eq!(seen.after.unwrap()["name"], "NoHistory Ops");
    // The entry is still undoable: the refused undo changed nothing.
    assert_eq!(
        count(
            &app.db,
            &format!(
                "SELECT count(*) FROM action_logs WHERE id = '{}' \
                 AND execution_state = 'done' AND undo_token IS NOT NULL",
                rename["id"].as_str().unwrap()
            )
        )
        .await,
        1
    );

    // Redo would write a name the guard refuses in history.
    let (plain, _) = create_org(
        &app,
        &admin,
        json!({"name": "Plain", "parentId": acme.organization_id}),
    )
    .await;
    let res = app
        .send(put_json(
            "/api/directory/organizations",
            &admin,
            json!({"id": plain, "name": "NoHistory Plain"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let rename = operation(&res);
    assert_eq!(undo(&app, &admin, &rename["undoToken"]).await.status, 200);
    assert_eq!(org(&app, &admin, plain).await.unwrap()["name"], "Plain");
    let before = log_and_outbox(&app.db).await;
    let res = app
        .send(post_json(
            "/api/audit_logs/audit-logs/actions/redo",
            &admin,
            json!({"logId": rename["id"]}),
        ))
        .await;
    assert_refused(&res, "History is locked");
    assert_eq!(org(&app, &admin, plain).await.unwrap()["name"], "Plain");
    assert_eq!(log_and_outbox(&app.db).await, before);
    assert_eq!(
        guard.seen.lock().unwrap().last().unwrap().phase,
        Phase::Redo
    );
    assert_eq!(
        count(
            &app.db,
            &format!(
                "SELECT count(*) FROM action_logs WHERE id = '{}' AND execution_state = 'undone'",
                rename["id"].as_str().unwrap()
            )
        )
        .await,
        1
    );
}

/// Writes an access-log row (its "change") and emits an event.
struct Touch {
    name: &'static str,
    command: &'static str,
}

impl Command for Touch {
    type Output = ();
    fn id(&self) -> &'static str {
        self.command
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            diesel::sql_query(
                "INSERT INTO access_reads (resource_kind, resource_ids, entry_ids, access_type) \
                 VALUES ('test.thing', ARRAY[$1], ARRAY[gen_random_uuid()], 'read')",
            )
            .bind::<diesel::sql_types::Text, _>(self.name)
            .execute(conn)
            .await?;
            Ok((
                (),
                LogEntry {
                    resource_kind: Some("test.thing".into()),
                    resource_id: Some(self.name.into()),
                    snapshot_after: Some(json!({"name": self.name})),
                    events: vec![Event {
                        name: "test.things.touched".into(),
                        payload: json!({"name": self.name}),
                    }],
                    ..Default::default()
                },
            ))
        })
    }
}

#[actix_web::test]
async fn a_refusal_rolls_back_even_outside_a_caller_transaction() {
    let app = start().await;
    let guard = Arc::new(Names::default());
    let actor =
        Actor::default().with_guards(WriteGuards::from(
            vec![guard.clone() as Arc<dyn WriteGuard>],
        ));
    let mut conn = app.db.conn().await.unwrap();
    let err = command::execute(
        &mut conn,
        &actor,
        Touch {
            name: "Forbidden thing",
            command: "test.things.touch",
        },
    )
    .await
    .unwrap_err();
    assert_eq!(err.status(), 422);
    assert_eq!(
        err.message(),
        "Refused by guard 'test.names': Name not allowed"
    );
    drop(conn);
    assert_eq!(count(&app.db, "SELECT count(*) FROM access_logs").await, 0);
    assert_eq!(log_and_outbox(&app.db).await, (0, 0));

    // A guard only sees the commands it applies to.
    let seen = guard.seen.lock().unwrap().len();
    let mut conn = app.db.conn().await.unwrap();
    command::execute(
        &mut conn,
        &actor,
        Touch {
            name: "Forbidden but ignored",
            command: "test.ignored.touch",
        },
    )
    .await
    .unwrap();
    assert_eq!(guard.seen.lock().unwrap().len(), seen);
    // Allowed (and committed without a caller transaction).
    command::execute(
        &mut conn,
        &actor,
        Touch {
            name: "Fine thing",
            command: "test.things.touch",
        },
    )
    .await
    .unwrap();
    drop(conn);
    assert_eq!(count(&app.db, "SELECT count(*) FROM access_logs").await, 2);
    assert_eq!(log_and_outbox(&app.db).await, (2, 2));
}

#[actix_web::test]
async fn one_refused_entry_refuses_the_whole_batch() {
    let app = start().await;
    let guard = Arc::new(Names::default());
    let actor =
        Actor::default().with_guards(WriteGuards::from(
            vec![guard.clone() as Arc<dyn WriteGuard>],
        ));
    let a = actor.clone();
    let result = app
        .db
        .transaction::<_, AppError, _>(|conn| {
            Box::pin(async move {
                command::execute_batch(
                    conn,
                    &a,
                    vec![
                        Touch {
                            name: "First",
                            command: "test.things.touch",
                        },
                        Touch {
                            name: "Forbidden second",
                            command: "test.things.touch",
                        },
                        Touch {
                            name: "Third",
                            command: "test.things.touch",
                        },
                    ],
                )
                .await
            })
        })
        .await;
    let err = result.err().unwrap();
    assert_eq!(err.status(), 422);
    assert_eq!(err.body()["guard"], "test.names");
    assert_eq!(count(&app.db, "SELECT count(*) FROM access_logs").await, 0);
    assert_eq!(log_and_outbox(&app.db).await, (0, 0));

    // record_batch asks about every entry before writing anything.
    let entries = vec![
        (
            "test.things.touch",
            LogEntry {
                snapshot_after: Some(json!({"name": "Fine"})),
                ..Default::default()
            },
        ),
        (
            "test.things.touch",
            LogEntry {
                snapshot_after: Some(json!({"name": "Forbidden"})),
                events: vec![Event {
                    name: "test.x".into(),
                    payload: json!({}),
                }],
                ..Default::default()
            },
        ),
    ];
    let mut conn = app.db.conn().await.unwrap();
    let err = command::record_batch(&mut conn, &actor, entries)
        .await
        .unwrap_err();
    assert_eq!(err.status(), 422);
    drop(conn);
    assert_eq!(log_and_outbox(&app.db).await, (0, 0));
}
