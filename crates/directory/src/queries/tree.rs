//! The materialised tree: re-parenting children and recomputing `root_id`,
//! `depth` and `ancestor_ids` after every write.

use std::collections::{HashMap, HashSet};

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use super::Result;
use crate::error::DirectoryError;
use crate::schema::organizations;

/// Serializes the organization writes of one tenant until the transaction
/// ends (a transaction-scoped advisory lock keyed on the tenant). A move
/// changes other organizations' places, so checks such as "no cycle" or "the
/// parent is inside the caller's organizations" hold only while no other
/// write of the same tree runs; the forward commands and undo/redo
/// (`Tracked::lock`) take it before they read.
pub async fn lock_tree(conn: &mut AsyncPgConnection, tenant: Uuid) -> Result<()> {
    diesel::sql_query(
        "SELECT pg_advisory_xact_lock(hashtextextended('directory.tree:' || $1::text, 0))",
    )
    .bind::<diesel::sql_types::Uuid, _>(tenant)
    .execute(conn)
    .await?;
    Ok(())
}

/// The tenant of an organization, deleted ones included.
pub async fn organization_tenant_of(
    conn: &mut AsyncPgConnection,
    id: Uuid,
) -> Result<Option<Uuid>> {
    Ok(organizations::table
        .filter(organizations::id.eq(id))
        .select(organizations::tenant_id)
        .first(conn)
        .await
        .optional()?)
}

/// Makes `children` direct children of `parent` (all must be live in the tenant,
/// none may be the parent or one of its ancestors).
pub(super) async fn assign_children(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    parent: Uuid,
    children: &[Uuid],
) -> Result<()> {
    if children.is_empty() {
        return Ok(());
    }
    if children.contains(&parent) {
        return Err(DirectoryError::InvalidChild);
    }
    let parent_ancestors: Vec<Uuid> = organizations::table
        .filter(organizations::id.eq(parent))
        .select(organizations::ancestor_ids)
        .first(conn)
        .await?;
    if children.iter().any(|c| parent_ancestors.contains(c)) {
        return Err(DirectoryError::InvalidChild);
    }
    let wanted: HashSet<Uuid> = children.iter().copied().collect();
    let n = diesel::update(
        organizations::table
            .filter(organizations::tenant_id.eq(tenant))
            .filter(organizations::deleted_at.is_null())
            .filter(organizations::id.eq_any(&wanted.iter().copied().collect::<Vec<_>>())),
    )
    .set(organizations::parent_id.eq(parent))
    .execute(conn)
    .await?;
    if n != wanted.len() {
        return Err(DirectoryError::InvalidChild);
    }
    Ok(())
}

/// Recomputes `root_id`, `depth` and `ancestor_ids` for the tenant's live
/// organizations from their `parent_id`s, writing only rows that changed. A
/// missing parent or a cycle makes a node a root.
/// `(id, parent_id, root_id, depth, ancestor_ids)` of one organization.
type TreeRow = (Uuid, Option<Uuid>, Uuid, i32, Vec<Uuid>);

pub async fn rebuild_tree(conn: &mut AsyncPgConnection, tenant: Uuid) -> Result<()> {
    let rows: Vec<TreeRow> = organizations::table
        .filter(organizations::tenant_id.eq(tenant))
        .filter(organizations::deleted_at.is_null())
        .select((
            organizations::id,
            organizations::parent_id,
            organizations::root_id,
            organizations::depth,
            organizations::ancestor_ids,
        ))
        .load(conn)
        .await?;
    let parents: HashMap<Uuid, Option<Uuid>> = rows.iter().map(|r| (r.0, r.1)).collect();
    for (id, parent, root, depth, ancestors) in &rows {
        let path = ancestor_path(*id, &parents);
        let new_root = <[Uuid]>::first(&path).copied().unwrap_or(*id);
        let new_parent = <[Uuid]>::last(&path).copied();
        if path != *ancestors
            || new_root != *root
            || path.len() as i32 != *depth
            || new_parent != *parent
        {
            diesel::update(organizations::table.filter(organizations::id.eq(id)))
                .set((
                    organizations::ancestor_ids.eq(&path),
                    organizations::root_id.eq(new_root),
                    organizations::depth.eq(path.len() as i32),
                    organizations::parent_id.eq(new_parent),
                ))
                .execute(conn)
                .await?;
        }
    }
    Ok(())
}

/// Ancestors of `id` from the root down to its parent; empty when the parent
/// is missing or the chain loops.
fn ancestor_path(id: Uuid, parents: &HashMap<Uuid, Option<Uuid>>) -> Vec<Uuid> {
    let mut path = Vec::new();
    let mut seen = HashSet::from([id]);
    let mut current = parents.get(&id).copied().flatten();
    while let Some(p) = current {
        if !parents.contains_key(&p) || !seen.insert(p) {
            return Vec::new();
        }
        path.push(p);
        current = parents.get(&p).copied().flatten();
    }
    path.reverse();
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_survive_cycles_and_orphans() {
        let (a, b, c, d) = (
            Uuid::from_u128(1),
            Uuid::from_u128(2),
            Uuid::from_u128(3),
            Uuid::from_u128(4),
        );
        let parents = HashMap::from([
            (a, None),
            (b, Some(a)),
            (c, Some(b)),
            (d, Some(Uuid::from_u128(9))),
        ]);
        assert_eq!(ancestor_path(c, &parents), vec![a, b]);
        assert_eq!(ancestor_path(a, &parents), Vec::<Uuid>::new());
        assert_eq!(ancestor_path(d, &parents), Vec::<Uuid>::new());
        let looped = HashMap::from([(a, Some(b)), (b, Some(a))]);
        assert_eq!(ancestor_path(a, &looped), Vec::<Uuid>::new());
    }
}
