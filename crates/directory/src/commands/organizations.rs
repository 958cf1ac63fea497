//! Organization writes as undoable commands: create, update and delete, each
//! checked against the caller's organization scope and logged with the
//! snapshots before and after.

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::json;
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::tracked::entry;
use stoa_core::command::{Actor, Command, Event, LogEntry};
use uuid::Uuid;

use super::{OrganizationSnapshot, missing, moved_children};
use crate::dto::{CreateOrganization, UpdateOrganization};
use crate::queries::snapshots::{previous_parents, snapshot};
use crate::service::{DirectoryService, PgDirectory};

fn event(name: &str, s: &OrganizationSnapshot) -> Event {
    Event {
        name: name.into(),
        payload: json!({"id": s.id, "tenantId": s.tenant_id}),
    }
}

/// The organization-scope boundary of a tree change: every organization it
/// involves (`None` = the tenant root: creating or detaching a root) must be
/// inside the caller's scope. System work (`stoa init`, seeding) carries no
/// caller and is not limited.
fn check_scope(
    actor: &Actor,
    involved: impl IntoIterator<Item = Option<Uuid>>,
) -> Result<(), AppError> {
    match actor.principal_as::<AuthContext>() {
        Some(ctx) => ctx.require_organizations(involved),
        None => Ok(()),
    }
}

pub struct CreateOrganizationCommand {
    pub tenant: Uuid,
    pub input: CreateOrganization,
}

impl Command for CreateOrganizationCommand {
    type Output = Uuid;
    fn id(&self) -> &'static str {
        "directory.organizations.create"
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        actor: &'a Actor,
    ) -> BoxFuture<'a, Result<(Uuid, LogEntry), AppError>> {
        Box::pin(async move {
            crate::queries::lock_tree(conn, self.tenant).await?;
            let children = self.input.child_ids.clone().unwrap_or_default();
            let parents = previous_parents(conn, &children).await?;
            let mut involved = moved_children(&parents);
            involved.extend(children.iter().map(|c| Some(*c)));
            involved.push(self.input.parent_id);
            check_scope(actor, involved)?;
            let id = PgDirectory
                .create_organization(conn, self.tenant, self.input)
                .await?;
            let after = snapshot(conn, Some(self.tenant), id)
                .await?
                .ok_or_else(missing)?;
            let after = OrganizationSnapshot {
                child_parents: parents,
                ..after
            };
            // "Before" is the same organization deleted: undo deletes it (and
            // gives the children back), redo revives the same id. The log
            // shows no previous state.
            let absent = OrganizationSnapshot {
                deleted: true,
                slug: None,
                child_ids: Vec::new(),
                ..after.clone()
            };
            let mut entry = entry("Create organization", id, Some(&absent), Some(&after));
            entry.snapshot_before = None;
            entry
                .events
                .push(event("directory.organization.created", &after));
            Ok((id, entry))
        })
    }
}

pub struct UpdateOrganizationCommand {
    pub tenant: Uuid,
    pub input: UpdateOrganization,
}

impl Command for UpdateOrganizationCommand {
    type Output = ();
    fn id(&self) -> &'static str {
        "directory.organizations.update"
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        actor: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            crate::queries::lock_tree(conn, self.tenant).await?;
            let before = snapshot(conn, Some(self.tenant), self.input.id)
                .await?
                .filter(|s| !s.deleted)
                .ok_or_else(missing)?;
            let children = self.input.child_ids.clone().unwrap_or_default();
            let parents = previous_parents(conn, &children).await?;
            let mut involved = moved_children(&parents);
            involved.extend(children.iter().map(|c| Some(*c)));
            involved.push(Some(before.id));
            if let Some(parent) = self.input.parent_id
                && parent != before.parent_id
            {
                involved.extend([parent, before.parent_id]);
            }
            check_scope(actor, involved)?;
            PgDirectory
                .update_organization(conn, self.tenant, &self.input)
                .await?;
            let after = snapshot(conn, Some(self.tenant), before.id)
                .await?
                .ok_or_else(missing)?;
            let before = OrganizationSnapshot {
                child_parents: parents.clone(),
                ..before
            };
            let after = OrganizationSnapshot {
                child_parents: parents,
                ..after
            };
            let mut entry = entry("Update organization", after.id, Some(&before), Some(&after));
            entry
                .events
                .push(event("directory.organization.updated", &after));
            Ok(((), entry))
        })
    }
}

pub struct DeleteOrganizationCommand {
    pub tenant: Uuid,
    pub id: Uuid,
}

impl Command for DeleteOrganizationCommand {
    type Output = ();
    fn id(&self) -> &'static str {
        "directory.organizations.delete"
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        actor: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            crate::queries::lock_tree(conn, self.tenant).await?;
            let before = snapshot(conn, Some(self.tenant), self.id)
                .await?
                .filter(|s| !s.deleted)
                .ok_or_else(missing)?;
            // Its children move up to its parent.
            let mut involved = vec![Some(before.id)];
            if !before.child_ids.is_empty() {
                involved.push(before.parent_id);
            }
            check_scope(actor, involved)?;
            PgDirectory
                .delete_organization(conn, self.tenant, self.id)
                .await?;
            let after = snapshot(conn, Some(self.tenant), self.id)
                .await?
                .ok_or_else(missing)?;
            let mut entry = entry("Delete organization", self.id, Some(&before), Some(&after));
            entry
                .events
                .push(event("directory.organization.deleted", &before));
            Ok(((), entry))
        })
    }
}
