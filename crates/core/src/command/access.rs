//! Access logs: who read which records (and which fields).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;

use super::Actor;
use super::schema::access_logs;

/// Records that `actor` read `ids` of `resource_kind`: one row per distinct id,
/// in one statement. `access_type` is `read:item` for a lookup by id,
/// `read:list` for a list of several, `read` otherwise (the reference's rule).
pub async fn record(
    conn: &mut AsyncPgConnection,
    actor: &Actor,
    resource_kind: &str,
    ids: &[String],
    by_id: bool,
    fields: &[&str],
    context: Option<Value>,
) -> Result<(), diesel::result::Error> {
    let mut ids: Vec<&String> = ids.iter().collect();
    ids.sort();
    ids.dedup();
    if ids.is_empty() {
        return Ok(());
    }
    let access_type = if by_id {
        "read:item"
    } else if ids.len() > 1 {
        "read:list"
    } else {
        "read"
    };
    let fields: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
    let rows: Vec<_> = ids
        .iter()
        .map(|id| {
            (
                access_logs::tenant_id.eq(actor.tenant_id),
                access_logs::organization_id.eq(actor.organization_id),
                access_logs::actor_user_id.eq(actor.user_id),
                access_logs::resource_kind.eq(resource_kind),
                access_logs::resource_id.eq(id.as_str()),
                access_logs::access_type.eq(access_type),
                access_logs::fields.eq(&fields),
                access_logs::context_json.eq(&context),
            )
        })
        .collect();
    diesel::insert_into(access_logs::table)
        .values(rows)
        .execute(conn)
        .await
        .map(|_| ())
}

/// A read query that records its own access-log entries in the same
/// statement: `WITH stoa_page AS (<query>), stoa_read_log AS (INSERT INTO
/// access_logs ... SELECT ... FROM stoa_page) SELECT * FROM stoa_page`.
///
/// The first column `query` selects must be the record's id (a uuid); one
/// entry is written per row, with the same `access_type` rule and context
/// (`{resultCount, path}`) as [`record`]. Reading and logging are one round
/// trip and one transaction: a read is never served without its entry, and no
/// entry is lost to a crash between the two.
pub struct LoggedRead<'a, Q> {
    query: Q,
    actor: &'a Actor,
    resource_kind: &'a str,
    by_id: bool,
    fields: Vec<String>,
    path: &'a str,
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
    }
}

impl<Q: diesel::query_builder::QueryId> diesel::query_builder::QueryId for LoggedRead<'_, Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: diesel::query_builder::Query> diesel::query_builder::Query for LoggedRead<'_, Q> {
    type SqlType = Q::SqlType;
}

impl<Q: diesel::query_builder::QueryFragment<diesel::pg::Pg>>
    diesel::query_builder::QueryFragment<diesel::pg::Pg> for LoggedRead<'_, Q>
{
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
    ) -> diesel::QueryResult<()> {
        use diesel::sql_types::{Array, Bool, Nullable, Text, Uuid as SqlUuid};
        out.push_sql("WITH stoa_page AS (");
        self.query.walk_ast(out.reborrow())?;
        out.push_sql(
            "), stoa_read_log AS (INSERT INTO access_logs (tenant_id, organization_id, \
             actor_user_id, resource_kind, resource_id, access_type, fields, context_json) \
             SELECT ",
        );
        out.push_bind_param::<Nullable<SqlUuid>, _>(&self.actor.tenant_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<SqlUuid>, _>(&self.actor.organization_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<SqlUuid>, _>(&self.actor.user_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&self.resource_kind)?;
        out.push_sql(", stoa_logged.stoa_id::text, CASE WHEN ");
        out.push_bind_param::<Bool, _>(&self.by_id)?;
        out.push_sql(
            " THEN 'read:item' WHEN (SELECT count(*) FROM stoa_page) > 1 THEN 'read:list' \
             ELSE 'read' END, ",
        );
        out.push_bind_param::<Array<Text>, _>(&self.fields)?;
        out.push_sql(
            ", jsonb_build_object('resultCount', (SELECT count(*) FROM stoa_page), 'path', ",
        );
        out.push_bind_param::<Text, _>(&self.path)?;
        out.push_sql("::text) FROM stoa_page AS stoa_logged(stoa_id)) SELECT * FROM stoa_page");
        Ok(())
    }

    /// Always cached (see [`crate::prepared`]): the wrapper's SQL is fixed and
    /// the lists it wraps build theirs from fixed fragments with bound values
    /// (their `sql(...)` literals would otherwise make diesel parse and plan
    /// the statement on every request: 0.6 ms of Postgres time per user list).
    fn is_safe_to_cache_prepared(&self, _: &diesel::pg::Pg) -> diesel::QueryResult<bool> {
        Ok(true)
    }
}
