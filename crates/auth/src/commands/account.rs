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

/// Inside `impl Resource for S` of an account: whether the caller may write
/// the state at all (`writable`, from the token alone), its entry and write
/// ([`entry_of`], [`write`]), and its check (`check`, an `authorize` rule of
/// the previous and the target state).
macro_rules! account_resource {
    ($writable:path, $check:path) => {
        fn writable_by(&self, ctx: &AuthContext) -> Option<Result<(), AppError>> {
            Some($writable(ctx, self))
        }
        fn entry(label: &str, before: Option<&Self>, after: Option<&Self>) -> LogEntry {
            account::entry_of(label, before, after)
        }
        /// Writes only what changed from `before` (`Account::save_over`).
        async fn write(
            conn: &mut AsyncPgConnection,
            before: Option<&Self>,
            after: Option<&Self>,
        ) -> Result<Option<Self>, AppError> {
            account::write(conn, before, after).await
        }
        async fn check(
            conn: &mut AsyncPgConnection,
            ctx: &AuthContext,
            _: Option<&()>,
            target: &Self,
            previous: Option<&Self>,
        ) -> Result<(), AppError> {
            $check(conn, ctx, previous, Some(target)).await
        }
    };
}
pub(super) use account_resource;
