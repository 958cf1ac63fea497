//! Issue 49, from the attacker's side: a rule acts with no more than its
//! author holds now (a wider API key cannot be borrowed, at save or at run
//! time; a demoted author's rules stop), rules cannot forge other modules'
//! events (refused at save; a stored one reaches no mailer), and rules watch
//! only declared entity types.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use stoa_core::command::outbox::Dispatcher;
use stoa_core::db::Db;
use stoa_mail::{Mail, MailError, Mailer};
use uuid::Uuid;

use super::platform::{api_key, caller, deals_titled, follow_up, move_deal, role};
use super::support::*;

const OPTIONS: &str = "/api/business_rules/platform-call-options";

/// Replaces the features of the role `user_with_features` made for `email`.
async fn set_role_features(db: &Db, email: &str, features: &[&str]) {
    let list: Vec<String> = features.iter().map(|f| format!("'{f}'")).collect();
    count(
        db,
        &format!(
            "WITH u AS (UPDATE role_acls SET features = ARRAY[{}]::text[] WHERE role_id = \
             (SELECT id FROM roles WHERE name = 'role-{email}') RETURNING 1) \
             SELECT count(*) AS n FROM u",
            list.join(",")
        ),
    )
    .await;
}

/// A role of `tenant` granting `features`.
async fn role_granting(db: &Db, tenant: Uuid, name: &str, features: &[&str]) -> Uuid {
    let id = role(db, tenant, name).await;
    let list: Vec<String> = features.iter().map(|f| format!("'{f}'")).collect();
    count(
        db,
        &format!(
            "WITH i AS (INSERT INTO role_acls (role_id, tenant_id, features) \
             VALUES ('{id}', '{tenant}', ARRAY[{}]::text[]) RETURNING 1) \
             SELECT count(*) AS n FROM i",
            list.join(",")
        ),
    )
    .await;
    id
}

/// A rule that writes what its author may not, with `key` (in the attack
/// of issue 49 it called `PUT /api/auth/users`; this app mounts the deals'
/// operations, which the author may read but not write).
fn escalation(key: Uuid) -> Value {
    json!({
        "ruleId": "escalate", "ruleName": "Escalate", "ruleType": "ACTION",
        "entityType": "customers.deal", "eventType": "created",
        "successActions": [{"type": "CALL_OPEN_MERCATO", "config": {
            "endpoint": "/api/customers/deals", "method": "POST", "apiKeyId": key,
            "body": {"title": "Written by the borrowed key"},
        }}],
    })
}

#[actix_web::test]
async fn a_rules_author_cannot_borrow_an_administrators_key() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin_role = role(&app.db, acme.tenant_id, "admin").await;
    let integration = api_key(&app.db, &acme, "integration", &[admin_role]).await;
    let readers = role_granting(
        &app.db,
        acme.tenant_id,
        "deal-readers",
        &["customers.deals.view"],
    )
    .await;
    let reader_key = api_key(&app.db, &acme, "reader", &[readers]).await;
    let features = [
        "business_rules.manage",
        "business_rules.view",
        "api_keys.create",
        "customers.deals.view",
    ];
    let email = "rules@acme.com";
    let author = user_with_features(&app.db, &acme, email, &features, None, None).await;
    let token = token_for(&app.db, author).await;

    // The call options list only keys within the author's reach.
    let res = app.send(get(OPTIONS, &token)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let keys: Vec<Value> = res.json()["apiKeys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["id"].clone())
        .collect();
    assert!(keys.contains(&json!(reader_key)), "{keys:?}");
    assert!(!keys.contains(&json!(integration)), "{keys:?}");

    // Saving a rule that names the administrator's key: 403, nothing saved.
    let res = app
        .send(post_json(RULES, &token, escalation(integration)))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(
        res.json()["code"],
        "delegation_out_of_reach",
        "{}",
        res.text()
    );
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM business_rules").await,
        0
    );
    // Nor can an existing rule be changed to name it.
    let id = rule(&app, &token, follow_up(reader_key)).await;
    let res = app
        .send(put_json(
            RULES,
            &token,
            json!({"id": id, "successActions": escalation(integration)["successActions"]}),
        ))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    let stored = app.send(get(&format!("{RULES}/{id}"), &token)).await.json();
    assert_eq!(
        stored["successActions"][0]["config"]["apiKeyId"],
        json!(reader_key),
        "{stored}"
    );
}

#[actix_web::test]
async fn a_rule_calls_with_what_its_author_holds_now_and_stops_when_demoted() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let admin_role = role(&app.db, acme.tenant_id, "admin").await;
    let key = api_key(&app.db, &acme, "integration", &[admin_role]).await;
    let email = "author@acme.com";
    let author = user_with_features(&app.db, &acme, email, &["*"], None, None).await;
    let token = token_for(&app.db, author).await;
    rule(&app, &token, follow_up(key)).await;
    let slot = caller(&app);

    // While the author holds everything, the key's call goes through.
    move_deal(&app, &admin, "First").await;
    dispatch_with(&app.db, slot.clone()).await;
    assert_eq!(
        deals_titled(&app.db, acme.tenant_id, "Follow-up of First").await,
        1
    );

    // Demoted to reading deals and managing rules: the rule still runs, but
    // the key acts with what both hold, so creating a deal is refused.
    set_role_features(
        &app.db,
        email,
        &[
            "business_rules.*",
            "customers.deals.view",
            "api_keys.create",
        ],
    )
    .await;
    move_deal(&app, &admin, "Second").await;
    dispatch_with(&app.db, slot.clone()).await;
    assert_eq!(
        deals_titled(&app.db, acme.tenant_id, "Follow-up of Second").await,
        0,
        "the key acted beyond its author"
    );
    let logs = app
        .send(get(&format!("{LOGS}?sortField=id&sortDir=desc"), &admin))
        .await
        .json();
    let done = &logs["items"][0]["outputContext"]["actionsExecuted"][0];
    assert_eq!(done["httpStatus"], 403, "{logs}");

    // Without the rules feature the rule does not run at all.
    set_role_features(&app.db, email, &["customers.deals.view"]).await;
    move_deal(&app, &admin, "Third").await;
    dispatch_with(&app.db, slot).await;
    assert_eq!(
        deals_titled(&app.db, acme.tenant_id, "Follow-up of Third").await,
        0
    );
    let logs = app
        .send(get(&format!("{LOGS}?sortField=id&sortDir=desc"), &admin))
        .await
        .json();
    let last = &logs["items"][0];
    assert_eq!(last["executionResult"], "ERROR", "{last}");
    assert!(
        last["errorMessage"]
            .as_str()
            .is_some_and(|m| m.contains("no longer holds business_rules.manage")),
        "{last}"
    );
}

#[actix_web::test]
async fn a_demoted_authors_field_writes_are_refused() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let email = "writer@acme.com";
    let author = user_with_features(&app.db, &acme, email, &["*"], None, None).await;
    let token = token_for(&app.db, author).await;
    rule(
        &app,
        &token,
        json!({"ruleId": "flag", "ruleName": "Flag", "entityType": "customers.deal",
            "eventType": "created",
            "successActions": [{"type": "SET_FIELD", "config": {"field": "description", "value": "flagged"}}]}),
    )
    .await;
    set_role_features(
        &app.db,
        email,
        &["business_rules.*", "customers.deals.view"],
    )
    .await;
    let deal = deal(&app, &admin, json!({"title": "Plain"})).await;
    dispatch(&app.db).await;
    let stored = app
        .send(get(&format!("{DEALS}/{deal}"), &admin))
        .await
        .json();
    assert_ne!(stored["description"], "flagged", "{stored}");
    let logs = app.send(get(LOGS, &admin)).await.json();
    let done = &logs["items"][0]["outputContext"]["actionsExecuted"][0];
    assert_eq!(done["success"], false, "{logs}");
}

/// Records what it is asked to send.
#[derive(Default)]
struct Recorder(Mutex<Vec<Mail>>);

impl Mailer for Recorder {
    fn send<'a>(&'a self, mail: Mail) -> BoxFuture<'a, Result<(), MailError>> {
        Box::pin(async move {
            self.0.lock().unwrap().push(mail);
            Ok(())
        })
    }
}

#[actix_web::test]
async fn rules_cannot_emit_other_modules_events_and_a_stored_one_sends_no_mail() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    for name in ["mail.send", "customers.deal.deleted", "auth.user.updated"] {
        let res = app
            .send(post_json(RULES, &admin, json!({
                "ruleId": "forge", "ruleName": "Forge", "ruleType": "ACTION",
                "entityType": "customers.deal", "eventType": "created",
                "successActions": [{"type": "EMIT_EVENT", "config": {"eventName": name,
                    "payload": {"to": "victim@example.com", "subject": "Hi", "html": "<b>x</b>"}}}],
            })))
            .await;
        assert_eq!(res.status, 400, "{name}: {}", res.text());
        assert!(res.text().contains("namespace"), "{}", res.text());
    }
    // A rule stored before the check (edited here by hand) still emits it,
    // as an event of the rules' origin, which the mailer never trusts.
    let id = rule(
        &app,
        &admin,
        json!({"ruleId": "legacy", "entityType": "customers.deal", "eventType": "created",
            "successActions": [{"type": "EMIT_EVENT", "config": {"eventName": "acme.ping"}}]}),
    )
    .await;
    count(
        &app.db,
        &format!(
            "WITH u AS (UPDATE business_rules SET success_actions = '[{{\"type\": \"EMIT_EVENT\", \
             \"config\": {{\"eventName\": \"mail.send\", \"payload\": {{\"to\": [\"victim@example.com\"], \
             \"subject\": \"Hi\", \"text\": \"forged\"}}}}}}]' WHERE id = '{id}' RETURNING 1) \
             SELECT count(*) AS n FROM u"
        ),
    )
    .await;
    stoa_business_rules::cache::invalidate(acme.tenant_id);
    deal(&app, &admin, json!({"title": "Trigger"})).await;
    dispatch(&app.db).await;
    let forged = stoa_testkit::outbox_events_named(&app.db, "mail.send").await;
    assert_eq!(forged.len(), 1, "the rule ran: {forged:?}");
    assert_eq!(
        count(
            &app.db,
            "SELECT count(*) AS n FROM event_outbox WHERE name = 'mail.send' AND origin = 'business_rules'"
        )
        .await,
        1
    );
    let mailer = Arc::new(Recorder::default());
    let dispatcher = Dispatcher::new(
        app.db.clone(),
        vec![Arc::new(stoa_mail::MailSubscriber::new(mailer.clone()))],
    );
    while dispatcher.run_once().await.unwrap() > 0 {}
    assert!(
        mailer.0.lock().unwrap().is_empty(),
        "a forged mail was sent"
    );
}

#[actix_web::test]
async fn rules_watch_only_declared_entity_types_with_their_read_features() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let res = app
        .send(post_json(RULES, &admin, json!({
            "ruleId": "users", "ruleName": "Users", "ruleType": "ACTION", "entityType": "auth.user",
            "successActions": [{"type": "NOTIFY", "config": {"recipients": ["spy@example.com"],
                "message": "{{data.email}} {{data.roles}}"}}],
        })))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert!(
        res.text().contains("is not an entity type rules may watch"),
        "{}",
        res.text()
    );
    // A declared entity needs its read features.
    let author = user_with_features(
        &app.db,
        &acme,
        "blind@acme.com",
        &["business_rules.*"],
        None,
        None,
    )
    .await;
    let token = token_for(&app.db, author).await;
    let res = app
        .send(post_json(RULES, &token, json!({
            "ruleId": "deals", "ruleName": "Deals", "ruleType": "ACTION", "entityType": "customers.deal",
        })))
        .await;
    assert_eq!(res.status, 403, "{}", res.text());
    assert_eq!(
        count(&app.db, "SELECT count(*) AS n FROM business_rules").await,
        0
    );
}

#[actix_web::test]
async fn execute_runs_no_rule_of_a_demoted_author() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let email = "notifier@acme.com";
    let author = user_with_features(&app.db, &acme, email, &["*"], None, None).await;
    let token = token_for(&app.db, author).await;
    rule(
        &app,
        &token,
        json!({"ruleId": "mail-boss", "entityType": "crm.deal",
            "successActions": [{"type": "NOTIFY", "config": {"recipients": ["boss@acme.com"],
                "message": "Deal {{data.title}}"}}]}),
    )
    .await;
    let mails = || {
        count(
            &app.db,
            "SELECT count(*) AS n FROM event_outbox WHERE name = 'mail.send'",
        )
    };
    let run = json!({"entityType": "crm.deal", "data": {"title": "Big"}});
    let res = app.send(post_json(EXECUTE, &admin, run.clone())).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(mails().await, 1, "the author's rule acts: {}", res.text());

    set_role_features(&app.db, email, &["customers.deals.view"]).await;
    let res = app.send(post_json(EXECUTE, &admin, run)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let executed = &res.json()["executedRules"][0];
    assert!(
        executed["error"]
            .as_str()
            .is_some_and(|e| e.contains("no longer holds business_rules.manage")),
        "{executed}"
    );
    assert_eq!(mails().await, 1, "a demoted author's rule sent mail");
}
