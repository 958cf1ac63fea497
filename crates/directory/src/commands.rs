//! Directory mutations as commands: organizations are undoable (create, update,
//! delete), tenants are logged but not undoable (as in the reference).
//!
//! Undo and redo go through the shared `stoa_core::command::StateHandler`:
//! [`OrganizationSnapshot`] implements `Tracked`.

use std::collections::HashMap;
use std::sync::Arc;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use stoa_acl::{AuthContext, Registry};
use stoa_core::AppError;
use stoa_core::command::tracked::{StateHandler, Tracked, entry};
use stoa_core::command::{Actor, Command, CommandHandler, Event, LogEntry};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::DirectoryError;
use crate::model::{CreateOrganization, CreateTenant, UpdateOrganization, UpdateTenant};
use crate::provision::{TenantRequest, provision_tenant};
use crate::schema::organizations;
use crate::service::{DirectoryService, PgDirectory, rebuild_tree};

pub const ORGANIZATION_KIND: &str = "directory.organization";
pub const TENANT_KIND: &str = "directory.tenant";

/// Everything needed to put an organization back as it was.
///
/// Equality leaves out `child_ids` and `child_parents`: children are other
/// organizations' parent links, so they do not count as this one's changes
/// (undo refuses an entry only when the organization itself changed).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrganizationSnapshot {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub name: String,
    pub slug: Option<String>,
    pub logo_url: Option<String>,
    pub logo_preserve_aspect_ratio: bool,
    pub is_active: bool,
    pub parent_id: Option<Uuid>,
    pub child_ids: Vec<Uuid>,
    pub deleted: bool,
    /// The parents that the recorded command took the organizations of its
    /// `childIds` away from (undo gives them back; not loaded, not shown).
    #[serde(default)]
    pub child_parents: HashMap<Uuid, Option<Uuid>>,
}

impl PartialEq for OrganizationSnapshot {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.tenant_id == other.tenant_id
            && self.name == other.name
            && self.slug == other.slug
            && self.logo_url == other.logo_url
            && self.logo_preserve_aspect_ratio == other.logo_preserve_aspect_ratio
            && self.is_active == other.is_active
            && self.parent_id == other.parent_id
            && self.deleted == other.deleted
    }
}

type Row = (
    Uuid,
    Uuid,
    String,
    Option<String>,
    Option<String>,
    bool,
    bool,
    Option<Uuid>,
    Option<OffsetDateTime>,
);

/// The organization `id` of `tenant` (`None` = any tenant), deleted or not.
async fn snapshot(
    conn: &mut AsyncPgConnection,
    tenant: Option<Uuid>,
    id: Uuid,
) -> Result<Option<OrganizationSnapshot>, AppError> {
    let mut query = organizations::table
        .filter(organizations::id.eq(id))
        .into_boxed();
    if let Some(tenant) = tenant {
        query = query.filter(organizations::tenant_id.eq(tenant));
    }
    let row: Option<Row> = query
        .select((
            organizations::id,
            organizations::tenant_id,
            organizations::name,
            organizations::slug,
            organizations::logo_url,
            organizations::logo_preserve_aspect_ratio,
            organizations::is_active,
            organizations::parent_id,
            organizations::deleted_at,
        ))
        .first(conn)
        .await
        .optional()?;
    let Some((id, tenant_id, name, slug, logo_url, preserve, is_active, parent_id, deleted_at)) =
        row
    else {
        return Ok(None);
    };
    let child_ids: Vec<Uuid> = organizations::table
        .filter(organizations::parent_id.eq(id))
        .filter(organizations::deleted_at.is_null())
        .order(organizations::id.asc())
        .select(organizations::id)
        .load(conn)
        .await?;
    Ok(Some(OrganizationSnapshot {
        id,
        tenant_id,
        name,
        slug,
        logo_url,
        logo_preserve_aspect_ratio: preserve,
        is_active,
        parent_id,
        child_ids,
        deleted: deleted_at.is_some(),
        child_parents: HashMap::new(),
    }))
}

/// The snapshot shown in the action log (without `childParents`).
fn to_value(s: &OrganizationSnapshot) -> Value {
    let mut value = serde_json::to_value(s).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.remove("childParents");
    }
    value
}

/// Writes a snapshot's fields back (reviving or deleting the row as it says),
/// and makes its listed children its children again.
async fn restore(conn: &mut AsyncPgConnection, s: &OrganizationSnapshot) -> Result<(), AppError> {
    let slug = match &s.slug {
        // A slug taken meanwhile by another organization is not stolen back.
        Some(slug) if !s.deleted => {
            let taken: i64 = organizations::table
                .filter(organizations::tenant_id.eq(s.tenant_id))
                .filter(organizations::slug.eq(slug))
                .filter(organizations::deleted_at.is_null())
                .filter(organizations::id.ne(s.id))
                .count()
                .get_result(conn)
                .await?;
            (taken == 0).then(|| slug.clone())
        }
        _ => None,
    };
    let deleted_at = s.deleted.then(OffsetDateTime::now_utc);
    diesel::update(organizations::table.filter(organizations::id.eq(s.id)))
        .set((
            organizations::name.eq(&s.name),
            organizations::slug.eq(slug),
            organizations::logo_url.eq(&s.logo_url),
            organizations::logo_preserve_aspect_ratio.eq(s.logo_preserve_aspect_ratio),
            organizations::is_active.eq(s.is_active),
            organizations::parent_id.eq(s.parent_id),
            organizations::deleted_at.eq(deleted_at),
        ))
        .execute(conn)
        .await?;
    if !s.deleted && !s.child_ids.is_empty() {
        diesel::update(
            organizations::table
                .filter(organizations::id.eq_any(&s.child_ids))
                .filter(organizations::deleted_at.is_null()),
        )
        .set(organizations::parent_id.eq(s.id))
        .execute(conn)
        .await?;
    }
    Ok(())
}

/// Puts back the parents that `childIds` in an update took away.
async fn restore_parents(
    conn: &mut AsyncPgConnection,
    parents: &HashMap<Uuid, Option<Uuid>>,
) -> Result<(), AppError> {
    for (child, parent) in parents {
        diesel::update(organizations::table.filter(organizations::id.eq(child)))
            .set(organizations::parent_id.eq(parent))
            .execute(conn)
            .await?;
    }
    Ok(())
}

fn event(name: &str, s: &OrganizationSnapshot) -> Event {
    Event {
        name: name.into(),
        payload: json!({"id": s.id, "tenantId": s.tenant_id}),
    }
}

fn missing() -> AppError {
    DirectoryError::OrganizationNotFound.into()
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

/// The children a change re-parents and the parents they leave.
fn moved_children(parents: &HashMap<Uuid, Option<Uuid>>) -> Vec<Option<Uuid>> {
    parents
        .iter()
        .flat_map(|(child, parent)| [Some(*child), *parent])
        .collect()
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

async fn previous_parents(
    conn: &mut AsyncPgConnection,
    children: &[Uuid],
) -> Result<HashMap<Uuid, Option<Uuid>>, AppError> {
    if children.is_empty() {
        return Ok(HashMap::new());
    }
    Ok(organizations::table
        .filter(organizations::id.eq_any(children))
        .select((organizations::id, organizations::parent_id))
        .load::<(Uuid, Option<Uuid>)>(conn)
        .await?
        .into_iter()
        .collect())
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

/// Undo and redo write the tree as the routes do, for the caller of the undo
/// now: `directory.organizations.manage` in the organization's tenant, and
/// every organization the write involves inside the caller's scope.
fn may_write(
    actor: &Actor,
    current: &OrganizationSnapshot,
    target: &OrganizationSnapshot,
) -> Result<(), AppError> {
    let ctx = AuthContext::of(actor)?;
    ctx.require("directory.organizations.manage")?;
    ctx.target_tenant(current.tenant_id)?;
    let mut involved = moved_children(&target.child_parents);
    involved.extend([Some(current.id), current.parent_id, target.parent_id]);
    involved.extend(target.child_ids.iter().map(|c| Some(*c)));
    ctx.require_organizations(involved)
}

impl Tracked for OrganizationSnapshot {
    const KIND: &'static str = ORGANIZATION_KIND;

    async fn load(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Self>, AppError> {
        snapshot(conn, None, id).await
    }

    /// Gives the children the recorded command moved (and this state does not
    /// list) their previous parents, writes the organization, makes its
    /// listed children its children again, and rebuilds the tree.
    async fn restore(&self, conn: &mut AsyncPgConnection) -> Result<(), AppError> {
        let back: HashMap<Uuid, Option<Uuid>> = self
            .child_parents
            .iter()
            .filter(|(child, _)| !self.child_ids.contains(child))
            .map(|(child, parent)| (*child, *parent))
            .collect();
        restore_parents(conn, &back).await?;
        restore(conn, self).await?;
        rebuild_tree(conn, self.tenant_id).await?;
        Ok(())
    }

    /// Never reached (a create records the organization deleted as its
    /// previous state); deletes softly, like the route.
    async fn erase(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        if let Some(current) = snapshot(conn, None, id).await?
            && !current.deleted
        {
            let gone = OrganizationSnapshot {
                deleted: true,
                child_ids: Vec::new(),
                ..current
            };
            restore(conn, &gone).await?;
            rebuild_tree(conn, gone.tenant_id).await?;
        }
        Ok(())
    }

    fn view(&self) -> Value {
        to_value(self)
    }

    fn tenant(&self) -> Option<Uuid> {
        Some(self.tenant_id)
    }

    fn parent(&self) -> Option<(&'static str, String)> {
        self.parent_id.map(|p| (ORGANIZATION_KIND, p.to_string()))
    }

    async fn authorize(
        _: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        let current = current.ok_or_else(missing)?;
        may_write(actor, current, target.unwrap_or(current))
    }
}

/// The undo/redo handlers of the directory: the shared state handler.
pub fn handlers() -> Vec<Arc<dyn CommandHandler>> {
    [
        "directory.organizations.create",
        "directory.organizations.update",
        "directory.organizations.delete",
    ]
    .into_iter()
    .map(StateHandler::<OrganizationSnapshot>::boxed)
    .collect()
}

fn tenant_entry(label: &str, id: Uuid, before: Option<Value>, after: Option<Value>) -> LogEntry {
    LogEntry {
        action_label: Some(label.into()),
        resource_kind: Some(TENANT_KIND.into()),
        resource_id: Some(id.to_string()),
        snapshot_before: before,
        snapshot_after: after,
        tenant_id: Some(id),
        ..Default::default()
    }
}

async fn tenant_value(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Value>, AppError> {
    Ok(PgDirectory
        .tenant(conn, id)
        .await?
        .map(|t| json!({"id": t.id, "name": t.name, "isActive": t.is_active})))
}

/// Tenant writes: logged, not undoable. A created tenant is provisioned
/// (root organization, default roles, module seed data) with the registry.
pub enum TenantCommand {
    Create(CreateTenant, Arc<Registry>),
    Update(UpdateTenant),
    Delete(Uuid),
}

impl Command for TenantCommand {
    type Output = Uuid;
    fn id(&self) -> &'static str {
        match self {
            Self::Create(..) => "directory.tenants.create",
            Self::Update(_) => "directory.tenants.update",
            Self::Delete(_) => "directory.tenants.delete",
        }
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<(Uuid, LogEntry), AppError>> {
        Box::pin(async move {
            match self {
                Self::Create(input, registry) => {
                    let request = TenantRequest {
                        organization: input.name.clone(),
                        name: input.name,
                        is_active: input.is_active.unwrap_or(true),
                        users: Vec::new(),
                    };
                    let id = provision_tenant(conn, &registry, request).await?.tenant_id;
                    let after = tenant_value(conn, id).await?;
                    Ok((id, tenant_entry("Create tenant", id, None, after)))
                }
                Self::Update(input) => {
                    let before = tenant_value(conn, input.id).await?;
                    PgDirectory.update_tenant(conn, &input).await?;
                    let after = tenant_value(conn, input.id).await?;
                    Ok((
                        input.id,
                        tenant_entry("Update tenant", input.id, before, after),
                    ))
                }
                Self::Delete(id) => {
                    let before = tenant_value(conn, id).await?;
                    PgDirectory.delete_tenant(conn, id).await?;
                    Ok((id, tenant_entry("Delete tenant", id, before, None)))
                }
            }
        })
    }
}
