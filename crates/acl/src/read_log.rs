//! Access-log entries for reads that expose personal data (users' e-mail
//! addresses and names, consent records with IP addresses): who read which
//! user and which fields, as the reference's CRUD reads record them. Used by
//! every module that answers with users' personal data (stoa-auth's user
//! reads, stoa-preferences' consents).

use serde::Serialize;
use stoa_core::AppResult;
use uuid::Uuid;

use crate::AuthContext;

/// The resource kind of user records in the access log.
pub const USER: &str = crate::accounts::USER_KIND;

/// The union of the keys of `items` as they are serialized (the fields the
/// caller received), sorted.
pub fn fields_of<T: Serialize>(items: &[T]) -> Vec<String> {
    let mut fields: Vec<String> = items
        .iter()
        .filter_map(|item| serde_json::to_value(item).ok())
        .filter_map(|v| match v {
            serde_json::Value::Object(map) => Some(map.into_iter().map(|(k, _)| k)),
            _ => None,
        })
        .flatten()
        .collect();
    fields.sort();
    fields.dedup();
    fields
}

/// Records that the caller read the users `ids` (with `fields`), in one
/// statement on `conn`. `by_id` marks a lookup of one record by id.
pub async fn record_user_reads(
    conn: &mut diesel_async::AsyncPgConnection,
    ctx: &AuthContext,
    ids: &[Uuid],
    by_id: bool,
    fields: &[String],
    path: &str,
) -> AppResult<()> {
    let ids: Vec<String> = ids.iter().map(Uuid::to_string).collect();
    let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
    stoa_core::command::access::record(
        conn,
        &ctx.actor(),
        USER,
        &ids,
        by_id,
        &fields,
        Some(serde_json::json!({"resultCount": ids.len(), "path": path})),
    )
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_the_union_of_item_keys() {
        let items = [
            serde_json::json!({"id": 1, "email": "a"}),
            serde_json::json!({"id": 2, "hasPassword": true}),
        ];
        assert_eq!(fields_of(&items), ["email", "hasPassword", "id"]);
        assert!(fields_of::<serde_json::Value>(&[]).is_empty());
    }
}
