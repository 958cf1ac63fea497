//! Tenant A with a record of every kind, made through the API where the API
//! makes them, and tenant B with an administrator.

use diesel::QueryableByName;
use diesel::sql_types::{Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use serde_json::{Value, json};
use stoa_auth::testing::{Tenant, seed_tenant_with, token_for, user_with_features};
use stoa_core::db::Db;
use stoa_testkit::requests::{delete, post_json};
use stoa_testkit::{AppService, TestApp};
use uuid::Uuid;

/// Tenant A's records, one of each kind, by what names them in requests.
#[derive(Clone, Debug, Default)]
pub struct Records {
    pub tenant: Uuid,
    /// A child organization (the root is in `all`).
    pub organization: Uuid,
    /// A user who is not the caller of any check (the employee).
    pub user: Uuid,
    pub role: Uuid,
    pub device: Uuid,
    /// The device's client identifier (`deviceId`).
    pub device_key: String,
    pub api_key: Uuid,
    pub job: Uuid,
    pub variant: Uuid,
    pub action_log: Uuid,
    pub undo_token: String,
    pub product: Uuid,
    /// An item of the super admin's dashboard layout.
    pub layout_item: Uuid,
    pub deal: Uuid,
    pub pipeline: Uuid,
    pub stage: Uuid,
    /// A partition of tenant A and an attachment (a private file).
    pub partition: Uuid,
    pub attachment: Uuid,
    /// A business rule, a rule set and the rule's membership in it.
    pub rule: Uuid,
    pub rule_set: Uuid,
    pub rule_member: Uuid,
    /// A pending AI action (a proposed deal change).
    pub ai_action: Uuid,
    /// Every id of tenant A's records: none may reach another tenant's caller.
    pub all: Vec<Uuid>,
}

impl Records {
    /// The record an `id` of `path` names.
    pub fn id_of(&self, path: &str) -> Uuid {
        let kinds = [
            ("/api/auth/users", self.user),
            ("/api/auth/roles", self.role),
            ("/api/auth/sidebar/variants", self.variant),
            ("/api/directory/tenants", self.tenant),
            ("/api/directory/organizations", self.organization),
            ("/api/progress", self.job),
            ("/api/devices", self.device),
            ("/api/api_keys", self.api_key),
            ("/api/audit_logs", self.action_log),
            ("/api/catalog", self.product),
            ("/api/customers/deals", self.deal),
            ("/api/customers/pipelines", self.pipeline),
            ("/api/customers/pipeline-stages", self.stage),
            ("/api/attachments/partitions", self.partition),
            ("/api/attachments", self.attachment),
            ("/api/business_rules/rules", self.rule),
            ("/api/business_rules/sets", self.rule_set),
            ("/api/business_rules/execute", self.rule),
            // Log ids are numbers: a uuid is a malformed one (400).
            ("/api/business_rules/logs", self.rule),
            ("/api/ai_assistant/ai/actions", self.ai_action),
        ];
        kinds
            .iter()
            .find(|(prefix, _)| path.starts_with(prefix))
            .map(|(_, id)| *id)
            .unwrap_or_else(|| {
                panic!(
                    "the matrix does not know which record an `id` of {path} names: \
                     add its kind to authorization/seed.rs (Records::id_of) and seed one"
                )
            })
    }
}

/// What the matrix needs besides the records.
pub struct Seeded {
    pub a: Tenant,
    pub records: Records,
    /// A valid session token of tenant A's super admin.
    pub a_token: String,
    /// The secret of an API key of tenant A that was deleted.
    pub deleted_key: String,
    /// A tenant-A user whose role grants nothing.
    pub no_features: Uuid,
    /// An administrator of tenant B: every feature, not a super admin.
    pub b_admin: Uuid,
}

async fn created<S: AppService>(app: &TestApp<S>, token: &str, path: &str, body: Value) -> Value {
    let res = app.send(post_json(path, token, body)).await;
    assert!(
        res.status.is_success(),
        "seeding {path}: {} {}",
        res.status,
        res.text()
    );
    res.json()
}

fn id(value: &Value) -> Uuid {
    value
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an id: {value}"))
}

pub async fn seed<S: AppService>(app: &TestApp<S>) -> Seeded {
    let registry = stoa_server::registry().unwrap();
    let a = seed_tenant_with(&app.db, &registry, "Alpha", "alpha.test").await;
    let b = seed_tenant_with(&app.db, &registry, "Beta", "beta.test").await;
    let token = token_for(&app.db, a.superadmin).await;
    let t = token.as_str();

    let organization = created(
        app,
        t,
        "/api/directory/organizations",
        json!({"name": "Alpha Branch", "parentId": a.organization_id}),
    )
    .await;
    let product = created(
        app,
        t,
        "/api/catalog/products",
        json!({"title": "Alpha desk", "sku": "ALPHA-1", "priceAmount": "10", "priceCurrency": "EUR"}),
    )
    .await;
    let role = created(app, t, "/api/auth/roles", json!({"name": "alpha-clerks"})).await;
    let device = created(
        app,
        t,
        "/api/devices",
        json!({"deviceId": "alpha-phone", "platform": "ios", "pushToken": "alpha-push-token"}),
    )
    .await;
    let key = created(app, t, "/api/api_keys/keys", json!({"name": "Alpha key"})).await;
    let doomed = created(
        app,
        t,
        "/api/api_keys/keys",
        json!({"name": "Alpha old key"}),
    )
    .await;
    let res = app
        .send(delete(
            &format!("/api/api_keys/keys?id={}", id(&doomed["id"])),
            t,
        ))
        .await;
    assert!(res.status.is_success(), "{} {}", res.status, res.text());
    let job = created(
        app,
        t,
        "/api/progress/jobs",
        json!({"jobType": "matrix.check", "name": "Alpha job"}),
    )
    .await;
    let variant = created(
        app,
        t,
        "/api/auth/sidebar/variants",
        json!({"name": "Alpha layout"}),
    )
    .await;
    let layout_item = Uuid::new_v4();
    let res = app
        .send(stoa_testkit::requests::put_json(
            "/api/dashboards/layout",
            t,
            json!({"items": [{"id": layout_item, "widgetId": "dashboards.welcome", "order": 0}]}),
        ))
        .await;
    assert!(res.status.is_success(), "{} {}", res.status, res.text());
    let pipeline = created(
        app,
        t,
        "/api/customers/pipelines",
        json!({"name": "Alpha sales"}),
    )
    .await;
    let stage = created(
        app,
        t,
        "/api/customers/pipeline-stages",
        json!({"pipelineId": pipeline["id"], "label": "Lead"}),
    )
    .await;
    let deal = created(
        app,
        t,
        "/api/customers/deals",
        json!({"title": "Alpha deal", "pipelineStageId": stage["id"]}),
    )
    .await;
    let log = latest_action(&app.db, a.tenant_id).await;
    let partition = created(
        app,
        t,
        "/api/attachments/partitions",
        json!({"code": "alphaFiles", "title": "Alpha files"}),
    )
    .await;
    let upload = stoa_testkit::Multipart::new()
        .text("entityId", "customers:customer_deal")
        .text("recordId", deal["id"].as_str().unwrap_or_default())
        .file("file", "alpha.txt", "text/plain", b"alpha secret")
        .post("/api/attachments");
    let res = app.send(stoa_testkit::requests::bearer(upload, t)).await;
    assert!(
        res.status.is_success(),
        "seeding an attachment: {} {}",
        res.status,
        res.text()
    );
    let attachment = res.json()["item"]["id"].clone();

    let rule = created(
        app,
        t,
        "/api/business_rules/rules",
        json!({"ruleId": "alpha-rule", "ruleName": "Alpha rule", "ruleType": "ACTION", "entityType": "customers.deal"}),
    )
    .await;
    let rule_set = created(
        app,
        t,
        "/api/business_rules/sets",
        json!({"setId": "alpha-set", "setName": "Alpha set"}),
    )
    .await;
    let rule_member = created(
        app,
        t,
        &format!("/api/business_rules/sets/{}/members", id(&rule_set["id"])),
        json!({"ruleId": rule["id"]}),
    )
    .await;
    let proposal = created(
        app,
        t,
        "/api/ai_assistant/tools/execute",
        json!({"toolName": "customers.update_deal", "args": {"dealId": deal["id"], "title": "Alpha deal (AI)"}}),
    )
    .await;
    let ai_action = id(&proposal["result"]["pendingActionId"]);
    created(
        app,
        t,
        "/api/ai_assistant/ai/conversations",
        json!({"agentId": "customers.deal_analyzer", "conversationId": "alpha-conversation"}),
    )
    .await;

    let no_features = user_with_features(&app.db, &a, "nobody@alpha.test", &[], None, None).await;
    let b_admin = user_with_features(&app.db, &b, "root@beta.test", &["*"], None, None).await;

    let records = Records {
        tenant: a.tenant_id,
        organization: id(&organization["id"]),
        user: a.employee,
        role: id(&role["id"]),
        device: id(&device["id"]),
        device_key: "alpha-phone".into(),
        api_key: id(&key["id"]),
        job: id(&job["id"]),
        variant: id(&variant["variant"]["id"]),
        action_log: log.id,
        undo_token: log.undo_token,
        product: id(&product["id"]),
        layout_item,
        deal: id(&deal["id"]),
        pipeline: id(&pipeline["id"]),
        stage: id(&stage["id"]),
        partition: id(&partition["item"]["id"]),
        attachment: id(&attachment),
        rule: id(&rule["id"]),
        rule_set: id(&rule_set["id"]),
        rule_member: id(&rule_member["id"]),
        ai_action,
        all: Vec::new(),
    };
    let mut all = tenant_ids(&app.db, a.tenant_id).await;
    all.extend([id(&doomed["id"]), a.tenant_id, layout_item]);
    Seeded {
        records: Records { all, ..records },
        a_token: token,
        deleted_key: doomed["secret"].as_str().unwrap().to_string(),
        no_features,
        b_admin,
        a,
    }
}

#[derive(QueryableByName)]
struct Action {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    undo_token: String,
}

/// Tenant A's latest undoable action.
async fn latest_action(db: &Db, tenant: Uuid) -> Action {
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query(
        "SELECT id, undo_token FROM action_logs \
         WHERE tenant_id = $1 AND undo_token IS NOT NULL ORDER BY created_at DESC LIMIT 1",
    )
    .bind::<SqlUuid, _>(tenant)
    .get_result(&mut *conn)
    .await
    .unwrap()
}

#[derive(QueryableByName)]
struct Id {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
}

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

/// Tables with a `tenant_id` column: each holds tenant-owned records.
pub async fn tenant_tables(db: &Db) -> Vec<String> {
    let mut conn = db.conn().await.unwrap();
    let rows: Vec<Name> = diesel::sql_query(
        "SELECT table_name::text AS name FROM information_schema.columns \
         WHERE table_schema = 'public' AND column_name = 'tenant_id' ORDER BY 1",
    )
    .load(&mut *conn)
    .await
    .unwrap();
    rows.into_iter().map(|r| r.name).collect()
}

/// The id of every row tenant A owns, in every table with `id` and `tenant_id`.
async fn tenant_ids(db: &Db, tenant: Uuid) -> Vec<Uuid> {
    let mut ids = Vec::new();
    for table in tenant_tables(db).await {
        let mut conn = db.conn().await.unwrap();
        let rows: Result<Vec<Id>, _> =
            diesel::sql_query(format!("SELECT id FROM \"{table}\" WHERE tenant_id = $1"))
                .bind::<SqlUuid, _>(tenant)
                .load(&mut *conn)
                .await;
        // Tables whose key is not a uuid `id` hold no record a caller names.
        ids.extend(rows.unwrap_or_default().into_iter().map(|r| r.id));
    }
    ids
}

/// The sixth attacker: a tenant-A administrator holding every feature the
/// tenant admin holds (`*`, not a super admin) whose ACL is restricted to a
/// sibling organization (docs/security.md, "The organization scope is a
/// boundary for every write"): a new organization under A's root, neither
/// the root that holds the seeded records nor "Alpha Branch", which is a
/// record itself. It lives there too (its home organization).
pub struct Sibling {
    pub organization: Uuid,
    pub user: Uuid,
}

/// Seeds the restricted administrator, after [`seed`] (so `Records::all`
/// stays the records the other callers are probed with).
pub async fn seed_sibling<S: AppService>(app: &TestApp<S>, a: &Tenant, token: &str) -> Sibling {
    let organization = created(
        app,
        token,
        "/api/directory/organizations",
        json!({"name": "Alpha Sibling", "parentId": a.organization_id}),
    )
    .await;
    let organization = id(&organization["id"]);
    let user = user_with_features(
        &app.db,
        a,
        "sibling-admin@alpha.test",
        &["*"],
        Some(vec![organization]),
        Some(organization),
    )
    .await;
    Sibling { organization, user }
}

/// The organizations the sibling attacker reaches: its organization and
/// its descendants (an ACL's list reaches subtrees), by the live tree.
fn reached(sibling: &Sibling) -> String {
    format!(
        "(SELECT o.id FROM organizations o WHERE o.id = '{0}' OR '{0}' = ANY(o.ancestor_ids))",
        sibling.organization
    )
}

/// The roles whose ACL lists organizations, every one inside the sibling
/// attacker's.
fn own_roles(sibling: &Sibling) -> String {
    format!(
        "(SELECT a.role_id FROM role_acls a WHERE cardinality(a.organizations) > 0 \
         AND a.organizations <@ ARRAY{})",
        reached(sibling)
    )
}

/// Tables without `tenant_id` whose rows belong to a user (`user_id`):
/// sessions, role memberships, reset links. Tenant A's rows of them are its
/// users' rows.
async fn user_tables(db: &Db) -> Vec<String> {
    let mut conn = db.conn().await.unwrap();
    let rows: Vec<Name> = diesel::sql_query(
        "SELECT c.table_name::text AS name FROM information_schema.columns c \
         JOIN information_schema.tables t \
           ON t.table_schema = c.table_schema AND t.table_name = c.table_name \
         WHERE c.table_schema = 'public' AND c.column_name = 'user_id' \
           AND t.table_type = 'BASE TABLE' \
           AND NOT EXISTS (SELECT 1 FROM information_schema.columns o \
                           WHERE o.table_schema = 'public' AND o.table_name = c.table_name \
                             AND o.column_name = 'tenant_id') \
         ORDER BY 1",
    )
    .load(&mut *conn)
    .await
    .unwrap();
    rows.into_iter().map(|r| r.name).collect()
}

/// Tables with an `organization_id` column.
async fn organization_tables(db: &Db) -> Vec<String> {
    let mut conn = db.conn().await.unwrap();
    let rows: Vec<Name> = diesel::sql_query(
        "SELECT table_name::text AS name FROM information_schema.columns \
         WHERE table_schema = 'public' AND column_name = 'organization_id' ORDER BY 1",
    )
    .load(&mut *conn)
    .await
    .unwrap();
    rows.into_iter().map(|r| r.name).collect()
}

/// The condition that leaves the sibling attacker's own rows out of a
/// snapshot of `table`, and nothing else: what it may legitimately change
/// is its own organization's records and its own traces.
fn outside_sibling(table: &str, scoped: bool, user_owned: bool, sibling: &Sibling) -> String {
    let user = sibling.user;
    let reached = reached(sibling);
    let mut keep = vec!["TRUE".to_string()];
    // Records of its organization (and of organizations below it) are its
    // own to write. Rows without an organization are tenant-wide: readable
    // by it, never changed by it, so they stay in.
    if scoped {
        keep.push(format!(
            "(t.organization_id IS NULL OR t.organization_id NOT IN {reached})"
        ));
    }
    match table {
        // Its organization's own row (and those below it).
        "organizations" => keep.push(format!("t.id NOT IN {reached}")),
        // Its own user row (its home is the sibling organization anyway).
        "users" => keep.push(format!("t.id <> '{user}'")),
        // Its own role (user_with_features made it for it alone), and the
        // roles of its organization: roles are tenant rows without an
        // organization column, and a role's organizations are those its ACL
        // lists (a role it creates lists its set, docs/security.md). A role
        // listing none, or `[]`, stays in: tenant-wide, not its to change.
        "roles" => keep.push(format!(
            "t.id NOT IN (SELECT role_id FROM user_roles WHERE user_id = '{user}') \
             AND t.id NOT IN {}",
            own_roles(sibling)
        )),
        "role_acls" => keep.push(format!(
            "t.role_id NOT IN (SELECT role_id FROM user_roles WHERE user_id = '{user}') \
             AND t.role_id NOT IN {}",
            own_roles(sibling)
        )),
        // What it read is logged as its own entries, whatever organization
        // (or none, for a read across its set) they name.
        "access_logs" => keep.push(format!("t.actor_user_id IS DISTINCT FROM '{user}'")),
        _ => {}
    }
    // Rows owned by a user (sessions, role memberships, reset links) of
    // itself and of the users at home in its organization.
    if user_owned {
        keep.push(format!(
            "t.user_id <> '{user}' AND t.user_id NOT IN \
             (SELECT u.id FROM users u WHERE u.organization_id IN {reached})"
        ));
    }
    keep.join(" AND ")
}

/// The statement [`take`] runs: a digest of every row tenant A owns, per
/// table. Tenant A's rows are those of every table with `tenant_id`, the
/// tenant itself, and its users' rows in tables owned by a user (sessions,
/// role memberships, reset links). With `except`, the sibling attacker's
/// own rows are left out ([`outside_sibling`]): every other row of tenant
/// A must stay unchanged.
pub async fn snapshot_statement(db: &Db, except: Option<&Sibling>) -> String {
    let scoped = organization_tables(db).await;
    let mut tables: Vec<(String, &str, bool)> = tenant_tables(db)
        .await
        .into_iter()
        .map(|t| (t, "t.tenant_id = $1", false))
        .collect();
    tables.push(("tenants".into(), "t.id = $1", false));
    for table in user_tables(db).await {
        tables.push((
            table,
            "t.user_id IN (SELECT u.id FROM users u WHERE u.tenant_id = $1)",
            true,
        ));
    }
    let parts: Vec<String> = tables
        .into_iter()
        .map(|(table, owned, user_owned)| {
            let keep = match except {
                Some(sibling) => {
                    outside_sibling(&table, scoped.contains(&table), user_owned, sibling)
                }
                None => "TRUE".into(),
            };
            format!(
                "SELECT '{table}'::text AS name, \
                 md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS digest \
                 FROM \"{table}\" t WHERE {owned} AND {keep}"
            )
        })
        .collect();
    parts.join(" UNION ALL ")
}

#[derive(QueryableByName)]
struct TableDigest {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    digest: String,
}

/// Runs a [`snapshot_statement`] for `tenant`: (table, digest) pairs by
/// table name; equal digests mean those rows did not change.
pub async fn take(db: &Db, statement: &str, tenant: Uuid) -> Vec<(String, String)> {
    let mut conn = db.conn().await.unwrap();
    let rows: Vec<TableDigest> = diesel::sql_query(statement)
        .bind::<SqlUuid, _>(tenant)
        .load(&mut *conn)
        .await
        .unwrap();
    let mut out: Vec<(String, String)> = rows.into_iter().map(|r| (r.name, r.digest)).collect();
    out.sort();
    out
}

/// A digest of every row tenant A owns, per table
/// ([`snapshot_statement`]).
pub async fn snapshot(db: &Db, tenant: Uuid, except: Option<&Sibling>) -> Vec<(String, String)> {
    take(db, &snapshot_statement(db, except).await, tenant).await
}

/// Tenant A's records that live outside the sibling attacker's
/// organizations, by id, with the table that holds each: rows of another
/// organization (the root's records, "Alpha Branch"'s) and the other
/// organizations themselves. Tenant-wide rows (no organization column, or
/// none set) are readable to it and not listed.
pub async fn outside_records(db: &Db, tenant: Uuid, sibling: &Sibling) -> Vec<(Uuid, String)> {
    let reached = reached(sibling);
    let scoped = organization_tables(db).await;
    let mut out = Vec::new();
    for table in tenant_tables(db).await {
        let condition = if table == "organizations" {
            format!("t.id NOT IN {reached}")
        } else if scoped.contains(&table) {
            format!("t.organization_id IS NOT NULL AND t.organization_id NOT IN {reached}")
        } else {
            continue;
        };
        let mut conn = db.conn().await.unwrap();
        let rows: Result<Vec<Id>, _> = diesel::sql_query(format!(
            "SELECT t.id FROM \"{table}\" t WHERE t.tenant_id = $1 AND {condition}"
        ))
        .bind::<SqlUuid, _>(tenant)
        .load(&mut *conn)
        .await;
        // Tables whose key is not a uuid `id` hold no record a caller names.
        out.extend(
            rows.unwrap_or_default()
                .into_iter()
                .map(|r| (r.id, table.clone())),
        );
    }
    out
}
