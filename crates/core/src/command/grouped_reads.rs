//! Access-log entries of kept list answers, committed in groups.
//!
//! A kept answer ([`crate::http::read_cache`]) is checked by one read-only
//! statement; its access-log entry then joins the group being committed and
//! the answer is sent only once that group has committed (or taken the
//! normal path if it could not). One insert commits every entry waiting at
//! that moment: a write transaction costs Postgres about four times a
//! read-only statement, and one per kept read cost the user list half its
//! throughput. Entries are the rows [`super::access::logged`] writes (same
//! `access_type`, fields and `{resultCount, path}`), with their own entry
//! ids, and commit without waiting for the WAL flush like every read entry
//! outside a transaction.
//!
//! The group is written by a spawned task, so a request that goes away
//! (client disconnect) never strands the others. At most [`MAX_WAITING`]
//! entries wait; past that a kept answer is not served and its request takes
//! the normal path, which logs in its own statement.

use std::sync::{Arc, Mutex, MutexGuard};

use diesel::sql_types::{Array, Jsonb, Nullable, Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use serde_json::json;
use tokio::sync::oneshot;
use uuid::Uuid;

use super::Actor;
use super::access::{ASYNC_COMMIT, access_type, entry_ids};
use crate::db::Db;

/// Entries per insert (9 parameters each).
const MAX_GROUP: usize = 64;
/// Entries that may wait for a commit at once.
pub const MAX_WAITING: usize = 4096;

/// One read to log: what [`super::access::logged`] wrote for the same rows.
pub struct GroupedRead<'a> {
    pub actor: &'a Actor,
    pub resource_kind: &'a str,
    pub ids: &'a [Uuid],
    pub by_id: bool,
    pub fields: &'a [&'a str],
    pub path: &'a str,
}

struct Row {
    tenant_id: Option<Uuid>,
    organization_id: Option<Uuid>,
    actor_user_id: Option<Uuid>,
    resource_kind: String,
    resource_ids: Vec<String>,
    entry_ids: Vec<Uuid>,
    access_type: &'static str,
    fields: Vec<String>,
    context: serde_json::Value,
}

#[derive(Default)]
struct Waiting {
    rows: Vec<(Row, oneshot::Sender<bool>)>,
    writing: bool,
}

/// The group writer; clones share it.
#[derive(Clone)]
pub struct GroupedReads {
    db: Db,
    waiting: Arc<Mutex<Waiting>>,
}

impl GroupedReads {
    pub fn new(db: Db) -> Self {
        Self {
            db,
            waiting: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Logs `read`; `true` once its entry has committed, `false` when it could
    /// not (the database failed, or too many entries wait). A read of no
    /// records logs nothing and is `true`.
    pub async fn record(&self, read: GroupedRead<'_>) -> bool {
        let mut ids: Vec<String> = read.ids.iter().map(Uuid::to_string).collect();
        ids.sort_unstable();
        ids.dedup();
        if ids.is_empty() {
            return true;
        }
        let row = Row {
            tenant_id: read.actor.tenant_id,
            organization_id: read.actor.organization_id,
            actor_user_id: read.actor.user_id,
            resource_kind: read.resource_kind.to_string(),
            entry_ids: entry_ids(ids.len()),
            access_type: access_type(read.by_id, ids.len()),
            context: json!({"resultCount": ids.len(), "path": read.path}),
            resource_ids: ids,
            fields: read.fields.iter().map(|f| f.to_string()).collect(),
        };
        let (done, committed) = oneshot::channel();
        let lead = {
            let mut waiting = self.lock();
            if waiting.rows.len() >= MAX_WAITING {
                return false;
            }
            waiting.rows.push((row, done));
            !std::mem::replace(&mut waiting.writing, true)
        };
        if lead {
            let writer = self.clone();
            tokio::spawn(async move { writer.write_all().await });
        }
        committed.await.unwrap_or(false)
    }

    /// Writes groups until nobody waits.
    async fn write_all(self) {
        loop {
            let group: Vec<(Row, oneshot::Sender<bool>)> = {
                let mut waiting = self.lock();
                if waiting.rows.is_empty() {
                    waiting.writing = false;
                    return;
                }
                let n = waiting.rows.len().min(MAX_GROUP);
                waiting.rows.drain(..n).collect()
            };
            let committed = match self.insert(&group).await {
                Ok(()) => true,
                Err(err) => {
                    tracing::warn!(error = %err, entries = group.len(), "access-log group not written");
                    false
                }
            };
            for (_, done) in group {
                let _ = done.send(committed);
            }
        }
    }

    async fn insert(&self, group: &[(Row, oneshot::Sender<bool>)]) -> Result<(), String> {
        let mut conn = self.db.conn().await.map_err(|e| e.to_string())?;
        let mut sql = String::from(
            "INSERT INTO access_reads (tenant_id, organization_id, actor_user_id, resource_kind, \
             resource_ids, entry_ids, access_type, fields, context_json) \
             SELECT v.t, v.o, v.a, v.k, v.r, v.e, v.y, v.f, v.c FROM (VALUES ",
        );
        for i in 0..group.len() {
            let p = i * 9;
            if i > 0 {
                sql.push_str(", ");
            }
            sql.push_str(&format!(
                "(${}::uuid, ${}::uuid, ${}::uuid, ${}::text, ${}::text[], ${}::uuid[], ${}::text, \
                 ${}::text[], ${}::jsonb)",
                p + 1,
                p + 2,
                p + 3,
                p + 4,
                p + 5,
                p + 6,
                p + 7,
                p + 8,
                p + 9
            ));
        }
        sql.push_str(") AS v(t, o, a, k, r, e, y, f, c)");
        sql.push_str(ASYNC_COMMIT);
        let mut query = diesel::sql_query(sql).into_boxed();
        for (row, _) in group {
            query = query
                .bind::<Nullable<SqlUuid>, _>(row.tenant_id)
                .bind::<Nullable<SqlUuid>, _>(row.organization_id)
                .bind::<Nullable<SqlUuid>, _>(row.actor_user_id)
                .bind::<Text, _>(row.resource_kind.clone())
                .bind::<Array<Text>, _>(row.resource_ids.clone())
                .bind::<Array<SqlUuid>, _>(row.entry_ids.clone())
                .bind::<Text, _>(row.access_type)
                .bind::<Array<Text>, _>(row.fields.clone())
                .bind::<Jsonb, _>(row.context.clone());
        }
        query
            .execute(&mut *conn)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}
