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

/// One read to log, prepared once and logged at every use: what
/// [`super::access::logged`] wrote for the same rows (same `access_type`,
/// fields and `{resultCount, path}`); each use gets its own entry ids.
pub struct GroupedRead {
    tenant_id: Option<Uuid>,
    organization_id: Option<Uuid>,
    actor_user_id: Option<Uuid>,
    resource_kind: String,
    resource_ids: Vec<String>,
    access_type: &'static str,
    fields: Vec<String>,
    context: serde_json::Value,
}

impl GroupedRead {
    /// `actor` read `ids` (each distinct id once) of `resource_kind`.
    pub fn new(
        actor: &Actor,
        resource_kind: &str,
        ids: &[Uuid],
        by_id: bool,
        fields: &[&str],
        path: &str,
    ) -> Self {
        let mut resource_ids: Vec<String> = ids.iter().map(Uuid::to_string).collect();
        resource_ids.sort_unstable();
        resource_ids.dedup();
        Self {
            tenant_id: actor.tenant_id,
            organization_id: actor.organization_id,
            actor_user_id: actor.user_id,
            resource_kind: resource_kind.to_string(),
            access_type: access_type(by_id, resource_ids.len()),
            context: json!({"resultCount": resource_ids.len(), "path": path}),
            resource_ids,
            fields: fields.iter().map(|f| f.to_string()).collect(),
        }
    }

    /// A read of no records: nothing to log.
    pub fn is_empty(&self) -> bool {
        self.resource_ids.is_empty()
    }
}

struct Pending {
    read: Arc<GroupedRead>,
    entry_ids: Vec<Uuid>,
    done: oneshot::Sender<bool>,
}

#[derive(Default)]
struct Waiting {
    entries: Vec<Pending>,
    /// A writer task is running. One at a time keeps groups large: a second
    /// one that started when 8 entries waited measured slower (smaller
    /// groups, one write transaction each).
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

    /// Logs `read` once more; `true` once its entry has committed, `false`
    /// when it could not (the database failed, or too many entries wait). A
    /// read of no records logs nothing and is `true`.
    pub async fn record(&self, read: Arc<GroupedRead>) -> bool {
        if read.is_empty() {
            return true;
        }
        let (done, committed) = oneshot::channel();
        let entry_ids = entry_ids(read.resource_ids.len());
        let start_writer = {
            let mut waiting = self.lock();
            if waiting.entries.len() >= MAX_WAITING {
                return false;
            }
            waiting.entries.push(Pending {
                read,
                entry_ids,
                done,
            });
            !std::mem::replace(&mut waiting.writing, true)
        };
        if start_writer {
            let writer = self.clone();
            tokio::spawn(async move { writer.write_all().await });
        }
        committed.await.unwrap_or(false)
    }

    /// Writes groups until nobody waits.
    async fn write_all(self) {
        loop {
            let group: Vec<Pending> = {
                let mut waiting = self.lock();
                if waiting.entries.is_empty() {
                    waiting.writing = false;
                    return;
                }
                let n = waiting.entries.len().min(MAX_GROUP);
                waiting.entries.drain(..n).collect()
            };
            let committed = match self.insert(&group).await {
                Ok(()) => true,
                Err(err) => {
                    tracing::warn!(error = %err, entries = group.len(), "access-log group not written");
                    false
                }
            };
            for pending in group {
                let _ = pending.done.send(committed);
            }
        }
    }

    async fn insert(&self, group: &[Pending]) -> Result<(), String> {
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
        for pending in group {
            let read = &*pending.read;
            query = query
                .bind::<Nullable<SqlUuid>, _>(read.tenant_id)
                .bind::<Nullable<SqlUuid>, _>(read.organization_id)
                .bind::<Nullable<SqlUuid>, _>(read.actor_user_id)
                .bind::<Text, _>(&read.resource_kind)
                .bind::<Array<Text>, _>(&read.resource_ids)
                .bind::<Array<SqlUuid>, _>(&pending.entry_ids)
                .bind::<Text, _>(read.access_type)
                .bind::<Array<Text>, _>(&read.fields)
                .bind::<Jsonb, _>(&read.context);
        }
        query
            .execute(&mut *conn)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}
