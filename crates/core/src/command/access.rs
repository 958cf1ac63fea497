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
