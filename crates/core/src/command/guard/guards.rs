//! The registered guards as one value: run them all before a write (and
//! after it), log each refusal's entries on a connection of their own.

use std::fmt;
use std::sync::Arc;

use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use super::super::schema::guard_logs;
use crate::db::Db;
use crate::error::AppError;

use super::{GuardInput, GuardLogEntry, WriteGuard, refused_with};

/// The guards registered at startup, in registration order, and the pool
/// a refusal's log entries are written through. Cheap to clone.
#[derive(Clone, Default)]
pub struct WriteGuards {
    list: Arc<[Arc<dyn WriteGuard>]>,
    log_db: Option<Db>,
}

impl fmt::Debug for WriteGuards {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.list.iter().map(|g| g.id()))
            .finish()
    }
}

impl From<Vec<Arc<dyn WriteGuard>>> for WriteGuards {
    fn from(guards: Vec<Arc<dyn WriteGuard>>) -> Self {
        Self {
            list: guards.into(),
            log_db: None,
        }
    }
}

impl WriteGuards {
    /// These guards and `guard` after them; a guard with the same id is replaced.
    pub fn with(&self, guard: Arc<dyn WriteGuard>) -> Self {
        let mut list: Vec<Arc<dyn WriteGuard>> = self
            .list
            .iter()
            .filter(|g| g.id() != guard.id())
            .cloned()
            .collect();
        list.push(guard);
        Self {
            list: list.into(),
            log_db: self.log_db.clone(),
        }
    }

    /// The same guards, writing a refusal's log entries through `db` (a
    /// connection of their own, so they outlive the rolled-back write).
    /// Without it those entries only reach the tracing log.
    pub fn logging_to(mut self, db: Db) -> Self {
        self.log_db = Some(db);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Whether any guard applies to `command_id` in `tenant`
    /// ([`WriteGuard::applies_now`]: each guard reads again what it keeps in
    /// memory if that was stale): when none does, [`check`](Self::check)
    /// allows every write of it without asking, and a bulk job may record
    /// it in SQL ([`super::record_set`]).
    pub async fn applies_now(
        &self,
        conn: &mut AsyncPgConnection,
        command_id: &str,
        tenant_id: Option<Uuid>,
    ) -> Result<bool, AppError> {
        for guard in self.list.iter() {
            if guard.applies_now(conn, command_id, tenant_id).await? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn WriteGuard>> {
        self.list.iter()
    }

    /// Asks every guard that applies; the first refusal wins. Entries the
    /// guards logged are written to `guard_logs`: on `conn` (with the write)
    /// when it goes through, on a connection of their own when it is refused.
    pub async fn check(
        &self,
        conn: &mut AsyncPgConnection,
        input: &GuardInput<'_>,
    ) -> Result<(), AppError> {
        let tenant = input.tenant_id();
        for guard in self
            .list
            .iter()
            .filter(|g| g.applies_to(input.command_id, tenant))
        {
            let asked = input.for_guard(guard.id());
            let Some(violations) = guard.check(conn, &asked).await?.violations() else {
                continue;
            };
            tracing::info!(
                guard = guard.id(),
                command = input.command_id,
                phase = input.phase.as_str(),
                resource.kind = input.resource_kind(),
                resource.id = input.resource_id(),
                violations = violations.len(),
                "write refused by guard"
            );
            let refusal = refused_with(guard.id(), &violations);
            let logged = input.log.take();
            if !logged.is_empty() {
                self.write_refusal_log(input, logged).await;
            }
            return Err(refusal);
        }
        let logged = input.log.take();
        if !logged.is_empty() {
            insert_log(conn, input, "allowed", logged).await?;
        }
        Ok(())
    }

    /// A refusal's entries, on a connection of their own: the write's
    /// transaction is about to roll back. A failure here is logged and does
    /// not change the answer (the refusal stands).
    async fn write_refusal_log(
        &self,
        input: &GuardInput<'_>,
        logged: Vec<(String, GuardLogEntry)>,
    ) {
        let Some(db) = &self.log_db else {
            for (guard, entry) in &logged {
                tracing::warn!(guard, message = %entry.message, "guard log entry not stored (no log database)");
            }
            return;
        };
        let written = match db.conn().await {
            Ok(mut own) => insert_log(&mut own, input, "refused", logged)
                .await
                .map_err(|e| e.to_string()),
            Err(err) => Err(err.to_string()),
        };
        if let Err(err) = written {
            tracing::error!(error = %err, command = input.command_id, "guard log entries of a refusal were lost");
        }
    }
}

async fn insert_log(
    conn: &mut AsyncPgConnection,
    input: &GuardInput<'_>,
    outcome: &str,
    logged: Vec<(String, GuardLogEntry)>,
) -> Result<(), AppError> {
    use diesel::ExpressionMethods;
    let rows: Vec<_> = logged
        .into_iter()
        .map(|(guard, entry)| {
            (
                guard_logs::tenant_id.eq(input.tenant_id()),
                guard_logs::organization_id.eq(input.organization_id()),
                guard_logs::actor_user_id.eq(input.actor.user_id),
                guard_logs::guard.eq(guard),
                guard_logs::command_id.eq(input.command_id),
                guard_logs::phase.eq(input.phase.as_str()),
                guard_logs::resource_kind.eq(input.resource_kind()),
                guard_logs::resource_id.eq(input.resource_id()),
                guard_logs::outcome.eq(outcome),
                guard_logs::message.eq(entry.message),
                guard_logs::data.eq(entry.data),
            )
        })
        .collect();
    diesel::insert_into(guard_logs::table)
        .values(rows)
        .execute(conn)
        .await?;
    Ok(())
}
