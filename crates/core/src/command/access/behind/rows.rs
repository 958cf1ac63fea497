//! The one insert of a batch: every row's columns as arrays, `unnest`ed
//! into `access_reads`.

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::result::Error as DieselError;
use diesel::sql_types::{Array, Integer, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use super::super::{ASYNC_COMMIT, access_type, entry_ids_from, push_reader};
use crate::command::in_transaction;

use super::batch::Row;

pub(super) async fn insert(conn: &mut AsyncPgConnection, batch: &[Row]) -> Result<(), DieselError> {
    let rows = Rows::new(batch, !in_transaction(conn));
    rows.execute(conn).await.map(|_| ())
}

/// `INSERT INTO access_reads ... SELECT ... FROM (VALUES (...), ...)`, one
/// [`Row`] each, its first read the row [`super::record`] and
/// [`super::logged`] write.
pub(super) struct Rows<'a> {
    batch: &'a [Row],
    entry_ids: Vec<Vec<Uuid>>,
    access_types: Vec<&'static str>,
    counts: Vec<i32>,
    /// Each row's repeats, `NULL` for a row of one read.
    repeats: Vec<Repeats<'a>>,
    async_commit: bool,
}

type Repeats<'a> = (Option<&'a [Uuid]>, Option<&'a [OffsetDateTime]>);

impl<'a> Rows<'a> {
    pub(super) fn new(batch: &'a [Row], async_commit: bool) -> Self {
        let logs = || batch.iter().map(|row| &row.first.log);
        Self {
            batch,
            entry_ids: batch
                .iter()
                .map(|row| entry_ids_from(row.first.base, row.first.log.ids.len()))
                .collect(),
            access_types: logs()
                .map(|log| access_type(log.by_id, log.ids.len()))
                .collect(),
            counts: logs()
                .map(|log| i32::try_from(log.ids.len()).unwrap_or(i32::MAX))
                .collect(),
            repeats: batch
                .iter()
                .map(|row| {
                    let repeated = !row.repeat_bases.is_empty();
                    (
                        repeated.then_some(row.repeat_bases.as_slice()),
                        repeated.then_some(row.repeat_ats.as_slice()),
                    )
                })
                .collect(),
            async_commit,
        }
    }
}

impl QueryId for Rows<'_> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl QueryFragment<Pg> for Rows<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> diesel::QueryResult<()> {
        out.push_sql(
            "INSERT INTO access_reads (id, created_at, tenant_id, organization_id, \
             actor_user_id, resource_kind, resource_ids, entry_ids, access_type, fields, \
             context_json, repeat_bases, repeat_ats) SELECT stoa_rows.* FROM (VALUES ",
        );
        for (i, row) in self.batch.iter().enumerate() {
            let pending = &row.first;
            let log = &*pending.log;
            out.push_sql(if i == 0 { "(" } else { ", (" });
            out.push_bind_param::<SqlUuid, _>(&row.id)?;
            out.push_sql(", ");
            out.push_bind_param::<Timestamptz, _>(&pending.at)?;
            out.push_sql(", ");
            push_reader(&mut out, &log.actor, &log.resource_kind)?;
            out.push_sql(", ");
            out.push_bind_param::<Array<Text>, _>(&log.ids)?;
            out.push_sql(", ");
            out.push_bind_param::<Array<SqlUuid>, _>(&self.entry_ids[i])?;
            out.push_sql(", ");
            out.push_bind_param::<Text, _>(&self.access_types[i])?;
            out.push_sql(", ");
            out.push_bind_param::<Array<Text>, _>(&log.fields)?;
            out.push_sql(", jsonb_build_object('resultCount', ");
            out.push_bind_param::<Integer, _>(&self.counts[i])?;
            out.push_sql(", 'path', ");
            out.push_bind_param::<Text, _>(&log.path)?;
            out.push_sql("::text), ");
            let (bases, ats) = &self.repeats[i];
            out.push_bind_param::<Nullable<Array<SqlUuid>>, _>(bases)?;
            out.push_sql(", ");
            out.push_bind_param::<Nullable<Array<Timestamptz>>, _>(ats)?;
            out.push_sql(")");
        }
        out.push_sql(") AS stoa_rows");
        if self.async_commit {
            out.push_sql(ASYNC_COMMIT);
        }
        out.push_sql(" ON CONFLICT (id, created_at) DO NOTHING");
        Ok(())
    }

    /// Cached by text: batches are powers of two long, so few texts exist.
    fn is_safe_to_cache_prepared(&self, _: &Pg) -> diesel::QueryResult<bool> {
        Ok(true)
    }
}
