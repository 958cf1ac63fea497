//! The one write command of every resource: writes a new state over the
//! old one and records the undoable before/after entry.

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::Value;
use stoa_core::AppError;
use stoa_core::command::{Actor, Command, LogEntry};

use super::Resource;

/// Writes `after` over `before` (`after` `None`: deletes, `before` `None`:
/// creates). The step that runs it ([`super::steps`]) has locked the row and
/// checked the caller and both states already; undo and redo replay the
/// entry it records through `StateHandler`.
pub struct Save<R> {
    pub command_id: &'static str,
    pub label: &'static str,
    pub before: Option<R>,
    pub after: Option<R>,
    /// Merged into the entry's context: who asked for the write beyond the
    /// actor (a business rule's `SET_FIELD`: `{"businessRule": {...}}`).
    pub context: Option<Value>,
}

impl<R: Resource> Command for Save<R> {
    type Output = Option<R>;
    fn id(&self) -> &'static str {
        self.command_id
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<(Option<R>, LogEntry), AppError>> {
        Box::pin(async move {
            let written = R::write(conn, self.before.as_ref(), self.after.as_ref()).await?;
            let mut log = R::entry(self.label, self.before.as_ref(), written.as_ref());
            log.context = merged(log.context.take(), self.context);
            Ok((written, log))
        })
    }
}

/// `extra`'s keys over `own`'s (either may be absent).
fn merged(own: Option<Value>, extra: Option<Value>) -> Option<Value> {
    match (own, extra) {
        (Some(Value::Object(mut own)), Some(Value::Object(extra))) => {
            own.extend(extra);
            Some(Value::Object(own))
        }
        (own, extra) => extra.or(own),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::merged;

    #[test]
    fn the_callers_context_is_merged_into_the_entrys() {
        assert_eq!(
            merged(Some(json!({"a": 1, "b": 1})), Some(json!({"b": 2}))),
            Some(json!({"a": 1, "b": 2}))
        );
        assert_eq!(merged(None, Some(json!({"b": 2}))), Some(json!({"b": 2})));
        assert_eq!(merged(Some(json!({"a": 1})), None), Some(json!({"a": 1})));
    }
}
