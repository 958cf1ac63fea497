//! Undo and redo racing a concurrent change (docs/security.md, "Checks hold
//! until the write"). Each test runs a bounded number of rounds in which an
//! undo or redo and a privileged change are sent at the same time, on two
//! pooled connections, and asserts what must hold whatever the order: the
//! privileged change stands, or the undo was refused. Before undo locked what
//! it read, a write committed between its read and its write was overwritten
//! (a demoted user stayed admin, an old password worked again, a removed
//! super-admin flag came back, concurrent edits were lost).
//!
//! The undo starts a little later each round ([`staggered`]), sweeping the
//! span the privileged request takes, so some round lands its read before
//! the privileged write commits and its own write after: the window the
//! lock closes. (Checked: with the lock taken out of `StateHandler`, these
//! tests fail.)

use std::future::Future;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use stoa_testkit::requests::form;
use stoa_testkit::{AppService, TestApp};
use uuid::Uuid;

use super::support::*;

/// Rounds per race: enough for the two requests to interleave at every
/// statement boundary a few times, few enough to stay well under a second.
const ROUNDS: u32 = 12;

/// Runs `privileged` and, `delay` after it started, `undo`, concurrently.
async fn staggered<A: Future, B: Future>(
    privileged: A,
    delay: Duration,
    undo: B,
) -> (A::Output, B::Output) {
    futures_util::join!(privileged, async {
        actix_web::rt::time::sleep(delay).await;
        undo.await
    })
}

/// The start offset of round `round`: the rounds sweep `span` evenly.
fn offset(span: Duration, round: u32) -> Duration {
    span * round / ROUNDS
}

/// How long `request` takes (a warm-up run of the privileged request).
async fn span_of<F: Future>(request: F) -> (Duration, F::Output) {
    let started = Instant::now();
    let out = request.await;
    (started.elapsed(), out)
}

async fn rename<S: AppService>(app: &TestApp<S>, token: &str, user: Uuid, name: &str) -> Value {
    let res = app
        .send(put_json(
            "/api/auth/users",
            token,
            json!({"id": user, "name": name}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    operation(&res)
}

async fn roles_of(app_db: &stoa_core::db::Db, user: Uuid) -> Vec<Uuid> {
    let mut conn = app_db.conn().await.unwrap();
    stoa_auth::queries::role_ids_of(&mut conn, user)
        .await
        .unwrap()
}

async fn user_acl<S: AppService>(app: &TestApp<S>, token: &str, user: Uuid) -> Value {
    let res = app
        .send(get(&format!("/api/auth/users/acl?userId={user}"), token))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()
}

/// A user demoted while they undo and redo their own entry stays demoted.
#[actix_web::test]
async fn a_demotion_racing_an_undo_always_stands() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let sa = token_for(&app.db, acme.superadmin).await;
    let admin_role = roles_of(&app.db, acme.admin).await;
    let employee_role = roles_of(&app.db, acme.employee).await;
    assert_ne!(admin_role, employee_role);
    let (span, _) = span_of(app.send(put_json(
        "/api/auth/users",
        &sa,
        json!({"id": acme.admin, "roles": employee_role}),
    )))
    .await;

    for round in 0..ROUNDS {
        // The admin is an admin again, and renames itself (an undoable entry).
        let res = app
            .send(put_json(
                "/api/auth/users",
                &sa,
                json!({"id": acme.admin, "roles": admin_role}),
            ))
            .await;
        assert_eq!(res.status, 200, "{}", res.text());
        let admin = token_for(&app.db, acme.admin).await;
        let own = rename(&app, &admin, acme.admin, &format!("Admin {round}")).await;

        let (demoted, undone) = staggered(
            app.send(put_json(
                "/api/auth/users",
                &sa,
                json!({"id": acme.admin, "roles": employee_role}),
            )),
            offset(span, round),
            undo(&app, &admin, &own["undoToken"]),
        )
        .await;
        assert_eq!(demoted.status, 200, "{}", demoted.text());
        assert!(
            [200, 400, 403, 409].contains(&undone.status.as_u16()),
            "round {round}: {} {}",
            undone.status,
            undone.text()
        );
        assert_eq!(
            roles_of(&app.db, acme.admin).await,
            employee_role,
            "round {round}: the undo ({}) overwrote the demotion",
            undone.status
        );
    }
}

/// A password reset confirmed while the user undoes their own entry stays:
/// the new password works, the old one does not.
#[actix_web::test]
async fn a_password_reset_racing_an_undo_always_stands() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let email = format!("admin@{}", acme.domain);
    let reset_token = |db: stoa_core::db::Db| async move {
        let mut conn = db.conn().await.unwrap();
        stoa_auth::queries::create_reset_token(
            &mut conn,
            acme.admin,
            "reset",
            Duration::from_secs(600),
        )
        .await
        .unwrap()
    };
    let warm_up = reset_token(app.db.clone()).await;
    let (span, res) = span_of(app.send(form(
        "/api/auth/reset/confirm",
        &format!("token={warm_up}&password=Fresh-Passw0rd-w"),
    )))
    .await;
    assert_eq!(res.status, 200, "{}", res.text());

    for round in 0..ROUNDS {
        // A confirmed reset ends the user's sessions: a new one each round.
        let admin = token_for(&app.db, acme.admin).await;
        let own = rename(&app, &admin, acme.admin, &format!("Admin {round}")).await;
        let reset = reset_token(app.db.clone()).await;
        let password = format!("Fresh-Passw0rd-{round}");
        let (confirmed, undone) = staggered(
            app.send(form(
                "/api/auth/reset/confirm",
                &format!("token={reset}&password={password}"),
            )),
            offset(span, round),
            undo(&app, &admin, &own["undoToken"]),
        )
        .await;
        assert_eq!(confirmed.status, 200, "{}", confirmed.text());
        assert!(
            [200, 400, 401, 409].contains(&undone.status.as_u16()),
            "round {round}: {} {}",
            undone.status,
            undone.text()
        );
        let login = |password: String| {
            app.send(form(
                "/api/auth/login",
                &format!("email={email}&password={password}"),
            ))
        };
        assert_eq!(
            login(password.clone()).await.status,
            200,
            "round {round}: the undo ({}) brought back the old password",
            undone.status
        );
        if round > 0 {
            let previous = format!("Fresh-Passw0rd-{}", round - 1);
            assert_eq!(login(previous).await.status, 401, "round {round}");
        }
    }
}

/// A super-admin flag removed while its holder undoes their own entry stays
/// removed.
#[actix_web::test]
async fn a_flag_removal_racing_an_undo_always_stands() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let sa = token_for(&app.db, acme.superadmin).await;
    let root = user_with_features(&app.db, &acme, "root2@acme.com", &[], None, None).await;
    let remove = || {
        app.send(put_json(
            "/api/auth/users/acl",
            &sa,
            json!({"userId": root, "isSuperAdmin": false, "features": ["auth.*"]}),
        ))
    };
    stoa_auth::testing::set_user_acl(&app.db, root, acme.tenant_id, &["auth.*"], true).await;
    let (span, _) = span_of(remove()).await;

    for round in 0..ROUNDS {
        stoa_auth::testing::set_user_acl(&app.db, root, acme.tenant_id, &["auth.*"], true).await;
        let token = token_for(&app.db, root).await;
        let own = rename(&app, &token, root, &format!("Root {round}")).await;
        let (removed, undone) = staggered(
            remove(),
            offset(span, round),
            undo(&app, &token, &own["undoToken"]),
        )
        .await;
        assert_eq!(removed.status, 200, "{}", removed.text());
        assert!(
            [200, 400, 403, 409].contains(&undone.status.as_u16()),
            "round {round}: {} {}",
            undone.status,
            undone.text()
        );
        assert_eq!(
            user_acl(&app, &sa, root).await["isSuperAdmin"],
            false,
            "round {round}: the undo ({}) gave the flag back",
            undone.status
        );
    }
}

/// An edit racing an undo of the same record is never lost behind two 200s:
/// either the undo ran first (and the edit is what remains) or the undo is
/// refused because the record changed.
#[actix_web::test]
async fn an_edit_racing_an_undo_is_never_lost() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let sa = token_for(&app.db, acme.superadmin).await;
    let admin = token_for(&app.db, acme.admin).await;
    let edit = |name: String| {
        app.send(put_json(
            "/api/auth/users",
            &admin,
            json!({"id": acme.employee, "name": name}),
        ))
    };
    let (span, _) = span_of(edit("Warm-up".into())).await;

    for round in 0..ROUNDS {
        let entry = rename(&app, &sa, acme.employee, &format!("Before {round}")).await;
        let edited = format!("Edited {round}");
        let (edit, undone) = staggered(
            edit(edited.clone()),
            offset(span, round),
            undo(&app, &sa, &entry["undoToken"]),
        )
        .await;
        assert_eq!(edit.status, 200, "{}", edit.text());
        let name = {
            let mut conn = app.db.conn().await.unwrap();
            let row = stoa_auth::queries::user_by_id(&mut conn, acme.employee).await;
            json!(row.unwrap().unwrap().name)
        };
        match undone.status.as_u16() {
            200 => assert_eq!(name, json!(edited), "round {round}: the edit was lost"),
            409 => assert_eq!(name, json!(edited), "round {round}"),
            other => panic!("round {round}: undo answered {other}: {}", undone.text()),
        }
    }
}

/// A redo racing a demotion: the redone state never overwrites it.
#[actix_web::test]
async fn a_redo_racing_a_demotion_never_restores_the_role() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let sa = token_for(&app.db, acme.superadmin).await;
    let admin_role = roles_of(&app.db, acme.admin).await;
    let employee_role = roles_of(&app.db, acme.employee).await;
    let demote = || {
        app.send(put_json(
            "/api/auth/users",
            &sa,
            json!({"id": acme.admin, "roles": employee_role}),
        ))
    };
    let (span, _) = span_of(demote()).await;

    for round in 0..ROUNDS {
        let res = app
            .send(put_json(
                "/api/auth/users",
                &sa,
                json!({"id": acme.admin, "roles": admin_role}),
            ))
            .await;
        assert_eq!(res.status, 200, "{}", res.text());
        let admin = token_for(&app.db, acme.admin).await;
        let own = rename(&app, &admin, acme.admin, &format!("Admin {round}")).await;
        let res = undo(&app, &admin, &own["undoToken"]).await;
        assert_eq!(res.status, 200, "{}", res.text());
        let (demoted, redone) = staggered(
            demote(),
            offset(span, round),
            app.send(post_json(
                "/api/audit_logs/audit-logs/actions/redo",
                &admin,
                json!({"logId": own["id"]}),
            )),
        )
        .await;
        assert_eq!(demoted.status, 200, "{}", demoted.text());
        assert!(
            [200, 400, 403, 409].contains(&redone.status.as_u16()),
            "round {round}: {} {}",
            redone.status,
            redone.text()
        );
        assert_eq!(
            roles_of(&app.db, acme.admin).await,
            employee_role,
            "round {round}: the redo ({}) overwrote the demotion",
            redone.status
        );
    }
}
