//! What users and roles share as resources of the kit: both are deleted
//! softly (a delete saves the record marked deleted, undo revives it with
//! its id) and written over their previous state, only what changed.

use diesel_async::AsyncPgConnection;
use serde_json::json;
use stoa_acl::resource::Resource;
use stoa_core::AppError;
use stoa_core::command::LogEntry;

use super::entry;

/// A user or role state.
pub(super) trait Account: Resource {
    /// The domain events of a creation, a change and a deletion (payload
    /// `{id}`; the envelope carries the rest).
    const EVENTS: [&'static str; 3];
    fn deleted(&self) -> bool;
    /// Writes this state over `before` (`None`: unknown, everything).
    fn save_over<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        before: Option<&'a Self>,
    ) -> impl Future<Output = Result<(), AppError>> + Send + 'a;
}

/// `Resource::entry` of an account: a creation, a deletion (the record
/// marked deleted) or a change, with its event.
pub(super) fn entry_of<S: Account>(label: &str, before: Option<&S>, after: Option<&S>) -> LogEntry {
    let Some(id) = after.or(before).map(Resource::id) else {
        return LogEntry::default();
    };
    let [created, updated, deleted] = S::EVENTS;
    let event = match (before, after) {
        (None, _) => created,
        (_, Some(after)) if !after.deleted() => updated,
        _ => deleted,
    };
    entry(label, id, before, after).with_event(event, json!({ "id": id }))
}

/// `Resource::write` of an account: [`Account::save_over`], or the undo of
/// a creation (`Tracked::erase`).
pub(super) async fn write<S: Account>(
    conn: &mut AsyncPgConnection,
    before: Option<&S>,
    after: Option<&S>,
) -> Result<Option<S>, AppError> {
    let Some(after) = after else {
        if let Some(before) = before {
            S::erase(conn, before.id()).await?;
        }
        return Ok(None);
    };
    after.save_over(conn, before).await?;
    S::load(conn, after.id()).await
}
