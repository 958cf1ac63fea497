//! Access logs: who read which records (and which fields).
//!
//! **One row per read.** A read writes one `access_reads` row naming every
//! record it returned (`resource_ids`, with one entry id each); the view
//! `access_logs` expands it to one entry per record, the shape the access-log
//! API and the reference have. A 50-user list page used to write 50 rows and
//! 150 index entries, which cost more Postgres time than the page itself.
//!
//! **Commit without waiting for the disk.** A read that logs outside a
//! caller's transaction commits its entry with `synchronous_commit = off`
//! (for that transaction only): the response does not wait for the WAL
//! flush, which otherwise made every list read as slow as a disk sync. The
//! entry is atomic and ordered like any commit; only a crash of Postgres
//! itself within the WAL writer's delay (≤ 0.6 s by default) can lose it —
//! the reference writes access logs fire-and-forget, so any failure loses
//! them there. Inside a caller's transaction the caller's durability applies.

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{Array, Bool, Jsonb, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use uuid::Uuid;

use super::{Actor, in_transaction};

pub mod behind;
pub mod retention;

pub use behind::{
    AccessQueue, MAX_PENDING, REPEAT_SPAN, REPEAT_SPAN_MICROS, log_behind, log_now, settle,
};

/// The access-log entry of a read that may be answered again from memory
/// ([`crate::http::read_cache`]): what [`logged`] wrote for it, which each
/// later use writes again ([`log_behind`]).
#[derive(Clone, Debug)]
pub struct ReadLog {
    pub actor: Actor,
    pub resource_kind: &'static str,
    /// The records read, rendered once: every use of the answer binds them.
    pub ids: Vec<String>,
    pub by_id: bool,
    pub fields: &'static [&'static str],
    pub path: &'static str,
}

/// Sets `synchronous_commit = off` for the current transaction when read
/// inside a statement; selected as a one-row `FROM` item.
const ASYNC_COMMIT: &str = " CROSS JOIN (SELECT set_config('synchronous_commit', 'off', true)) \
                            AS stoa_async_commit";

/// The `access_type` of a read: `read:item` for a lookup by id, `read:list`
/// for a list of several, `read` otherwise (the reference's rule).
fn access_type(by_id: bool, records: usize) -> &'static str {
    if by_id {
        "read:item"
    } else if records > 1 {
        "read:list"
    } else {
        "read"
    }
}

/// Every access-log write: the columns it fills, in this order, from a
/// `SELECT` of their values.
const INSERT_READ: &str = "INSERT INTO access_reads (tenant_id, organization_id, actor_user_id, \
                           resource_kind, resource_ids, entry_ids, access_type, fields, \
                           context_json) SELECT ";

/// Binds the first four values of [`INSERT_READ`]: who read, and what kind.
fn push_reader<'b>(
    out: &mut AstPass<'_, 'b, Pg>,
    actor: &'b Actor,
    resource_kind: &'b &str,
) -> diesel::QueryResult<()> {
    out.push_bind_param::<Nullable<SqlUuid>, _>(&actor.tenant_id)?;
    out.push_sql(", ");
    out.push_bind_param::<Nullable<SqlUuid>, _>(&actor.organization_id)?;
    out.push_sql(", ");
    out.push_bind_param::<Nullable<SqlUuid>, _>(&actor.user_id)?;
    out.push_sql(", ");
    out.push_bind_param::<Text, _>(resource_kind)
}

/// Records that `actor` read `ids` of `resource_kind` (each distinct id once),
/// as one row.
pub async fn record(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    resource_kind: &str,
    ids: &[String],
    by_id: bool,
    fields: &[&str],
    context: Option<Value>,
) -> Result<(), diesel::result::Error> {
    let mut ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return Ok(());
    }
    let entry_ids = entry_ids(ids.len());
    let mut sql = format!("{INSERT_READ}$1, $2, $3, $4, $5, $6, $7, $8, $9");
    if !in_transaction(conn) {
        sql.push_str(" FROM (SELECT 1) AS stoa_one");
        sql.push_str(ASYNC_COMMIT);
    }
    diesel::sql_query(sql)
        .bind::<Nullable<SqlUuid>, _>(actor.tenant_id)
        .bind::<Nullable<SqlUuid>, _>(actor.organization_id)
        .bind::<Nullable<SqlUuid>, _>(actor.user_id)
        .bind::<Text, _>(resource_kind)
        .bind::<Array<Text>, _>(&ids)
        .bind::<Array<SqlUuid>, _>(&entry_ids)
        .bind::<Text, _>(access_type(by_id, ids.len()))
        .bind::<Array<Text>, _>(fields)
        .bind::<Nullable<Jsonb>, _>(&context)
        .execute(conn)
        .await
        .map(|_| ())
}

/// Entry ids for `n` records (see [`entry_ids_from`]), from a fresh base.
fn entry_ids(n: usize) -> Vec<Uuid> {
    entry_ids_from(Uuid::new_v4(), n)
}

/// Entry ids for `n` records: `base` (a random v4 uuid) with its last two
/// bytes XORed with each record's position. Distinct within the read, random
/// across reads (106 random bits), still version 4; one random draw per read
/// instead of one per record (`gen_random_uuid()` per record was a third of
/// the cost of logging a 50-record read).
fn entry_ids_from(base: Uuid, n: usize) -> Vec<Uuid> {
    if n > usize::from(u16::MAX) + 1 {
        return (0..n).map(|_| Uuid::new_v4()).collect();
    }
    let base = *base.as_bytes();
    (0..n)
        .map(|i| {
            let mut bytes = base;
            let position = (i as u16).to_be_bytes();
            bytes[14] ^= position[0];
            bytes[15] ^= position[1];
            Uuid::from_bytes(bytes)
        })
        .collect()
}

/// A read query that records its own access-log entry in the same
/// statement: `WITH stoa_page AS (<query>), stoa_read_log AS (INSERT INTO
/// access_reads ... SELECT ... FROM stoa_page) SELECT * FROM stoa_page`.
///
/// The first column `query` selects must be the record's id (a uuid); the
/// entry names every row, with the same `access_type` rule and context
/// (`{resultCount, path}`) as [`record`]. Reading and logging are one round
/// trip and one transaction: a read is never served without its entry.
/// Run it with [`LoggedRead::load`], which chooses the commit mode (see the
/// module documentation).
pub struct LoggedRead<'a, Q> {
    query: Q,
    actor: &'a Actor,
    resource_kind: &'a str,
    by_id: bool,
    fields: Vec<String>,
    path: &'a str,
    async_commit: bool,
}

/// Wraps `query` so that it logs its rows as read by `actor` (see [`LoggedRead`]).
pub fn logged<'a, Q>(
    query: Q,
    actor: &'a Actor,
    resource_kind: &'a str,
    by_id: bool,
    fields: &[&str],
    path: &'a str,
) -> LoggedRead<'a, Q> {
    LoggedRead {
        query,
        actor,
        resource_kind,
        by_id,
        fields: fields.iter().map(|f| f.to_string()).collect(),
        path,
        async_commit: false,
    }
}

impl<'a, Q: 'a> LoggedRead<'a, Q> {
    /// Loads the rows and writes their entry; outside a caller's transaction
    /// the entry commits without waiting for the WAL flush. (Returns diesel's
    /// named future rather than being an `async fn`, so it can be awaited in
    /// a transaction closure.)
    pub fn load<'conn, U>(
        mut self,
        conn: &'conn mut AsyncPgConnection,
    ) -> diesel_async::return_futures::LoadFuture<'conn, 'a, Self, AsyncPgConnection, U>
    where
        U: Send,
        Self: diesel_async::methods::LoadQuery<'a, AsyncPgConnection, U>,
    {
        self.async_commit = !in_transaction(conn);
        RunQueryDsl::load(self, conn)
    }
}

impl<Q: QueryId> QueryId for LoggedRead<'_, Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: Query> Query for LoggedRead<'_, Q> {
    type SqlType = Q::SqlType;
}

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for LoggedRead<'_, Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> diesel::QueryResult<()> {
        out.push_sql("WITH stoa_page AS (");
        self.query.walk_ast(out.reborrow())?;
        out.push_sql("), stoa_read_log AS (");
        out.push_sql(INSERT_READ);
        push_reader(&mut out, self.actor, &self.resource_kind)?;
        out.push_sql(
            ", array_agg(stoa_logged.stoa_id::text), array_agg(gen_random_uuid()), CASE WHEN ",
        );
        out.push_bind_param::<Bool, _>(&self.by_id)?;
        out.push_sql(" THEN 'read:item' WHEN count(*) > 1 THEN 'read:list' ELSE 'read' END, ");
        out.push_bind_param::<Array<Text>, _>(&self.fields)?;
        out.push_sql(", jsonb_build_object('resultCount', count(*), 'path', ");
        out.push_bind_param::<Text, _>(&self.path)?;
        out.push_sql("::text) FROM stoa_page AS stoa_logged(stoa_id)");
        if self.async_commit {
            out.push_sql(ASYNC_COMMIT);
        }
        out.push_sql(" HAVING count(*) > 0) SELECT * FROM stoa_page");
        Ok(())
    }

    /// Always cached (see [`crate::prepared`]): the wrapper's SQL is fixed and
    /// the lists it wraps build theirs from fixed fragments with bound values
    /// (their `sql(...)` literals would otherwise make diesel parse and plan
    /// the statement on every request: 0.6 ms of Postgres time per user list).
    fn is_safe_to_cache_prepared(&self, _: &Pg) -> diesel::QueryResult<bool> {
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_ids_are_distinct_version_4_uuids() {
        let ids = entry_ids(300);
        let distinct: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), 300);
        assert!(ids.iter().all(|id| id.get_version_num() == 4));
        assert!(entry_ids(1) != entry_ids(1), "each read draws its own base");
    }

    #[test]
    fn access_type_follows_the_reference_rule() {
        assert_eq!(access_type(true, 5), "read:item");
        assert_eq!(access_type(false, 2), "read:list");
        assert_eq!(access_type(false, 1), "read");
    }

    #[test]
    fn only_a_read_outside_a_transaction_commits_asynchronously() {
        let actor = Actor::default();
        let query = diesel::select(diesel::dsl::sql::<SqlUuid>("gen_random_uuid()"));
        let mut read = logged(query, &actor, "test.thing", false, &["id"], "/api/things");
        let sql = diesel::debug_query::<Pg, _>(&read).to_string();
        assert!(sql.contains("INSERT INTO access_reads") && !sql.contains("set_config"));
        read.async_commit = true;
        let sql = diesel::debug_query::<Pg, _>(&read).to_string();
        assert!(sql.contains("set_config('synchronous_commit', 'off', true)"));
    }
}
