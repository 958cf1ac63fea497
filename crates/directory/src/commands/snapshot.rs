//! The organization snapshot that undo and redo restore through the shared
//! `StateHandler`, and who may restore it.

use std::collections::HashMap;
use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stoa_acl::AuthContext;
use stoa_core::AppError;
use stoa_core::command::tracked::{StateHandler, Tracked};
use stoa_core::command::{Actor, CommandHandler};
use uuid::Uuid;

use super::{ORGANIZATION_KIND, missing, moved_children};
use crate::queries::snapshots::{restore, restore_parents, snapshot};
use crate::queries::{ensure_acyclic, rebuild_tree};

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

/// The snapshot shown in the action log (without `childParents`).
fn to_value(s: &OrganizationSnapshot) -> Value {
    let mut value = serde_json::to_value(s).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.remove("childParents");
    }
    value
}

/// The parent links writing `state` back sets: the organization's own
/// (unless the state is deleted), the children the recorded command moved
/// given back their previous parents, and its listed children under it.
fn restored_links(
    state: &OrganizationSnapshot,
    back: &HashMap<Uuid, Option<Uuid>>,
) -> HashMap<Uuid, Option<Uuid>> {
    let mut links = back.clone();
    if !state.deleted {
        links.insert(state.id, state.parent_id);
        links.extend(state.child_ids.iter().map(|c| (*c, Some(state.id))));
    }
    links
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

    /// The tenant's tree: every organization write of a tenant takes this
    /// lock first (`queries::lock_tree`), since a move changes other
    /// organizations' places and a cycle check must see the tree it guards.
    async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), AppError> {
        if let Some(tenant) = crate::queries::organization_tenant_of(conn, id).await? {
            crate::queries::lock_tree(conn, tenant).await?;
        }
        Ok(())
    }

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
        // A state recorded before later moves can close a loop (undoing "A
        // back under B" after B moved under A): 409 before anything is written.
        ensure_acyclic(conn, self.tenant_id, &restored_links(self, &back)).await?;
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
