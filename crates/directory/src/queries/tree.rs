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

/// `(id, parent_id, root_id, depth, ancestor_ids)` of one organization.
type TreeRow = (Uuid, Option<Uuid>, Uuid, i32, Vec<Uuid>);

/// An organization on a parent loop in `parents` (`None` when the links form
/// a forest). Links to organizations missing from the map end a chain.
fn organization_on_a_cycle(parents: &HashMap<Uuid, Option<Uuid>>) -> Option<Uuid> {
    // Nodes whose chain is known to reach a root (or a missing parent).
    let mut settled: HashSet<Uuid> = HashSet::new();
    for &start in parents.keys() {
        let mut walk = Vec::new();
        let mut on_walk = HashSet::new();
        let mut current = Some(start);
        while let Some(id) = current {
            if settled.contains(&id) || !parents.contains_key(&id) {
                break;
            }
            if !on_walk.insert(id) {
                return Some(id);
            }
            walk.push(id);
            current = parents.get(&id).copied().flatten();
        }
        settled.extend(walk);
    }
    None
}

/// 409 when the tenant's live organizations, with `moves` applied (an
/// organization → its new parent; `None` = a root), would form a parent loop.
/// Undo and redo call it before writing a recorded state back: a state
/// recorded before a later move can close a loop the forward checks never
/// saw.
pub async fn ensure_acyclic(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    moves: &HashMap<Uuid, Option<Uuid>>,
) -> Result<()> {
    let mut parents: HashMap<Uuid, Option<Uuid>> = organizations::table
        .filter(organizations::tenant_id.eq(tenant))
        .filter(organizations::deleted_at.is_null())
        .select((organizations::id, organizations::parent_id))
        .load::<(Uuid, Option<Uuid>)>(conn)
        .await?
        .into_iter()
        .collect();
    parents.extend(moves.iter().map(|(id, parent)| (*id, *parent)));
    match organization_on_a_cycle(&parents) {
        Some(_) => Err(DirectoryError::TreeCycle),
        None => Ok(()),
    }
}

/// Recomputes `root_id`, `depth` and `ancestor_ids` for the tenant's live
/// organizations from their `parent_id`s, writing only rows that changed. A
/// missing parent makes a node a root. A parent loop is refused (409): every
/// write ends here, and the stored tree has none (this rebuild never stores
/// one), so a loop is the current write's; making its organizations roots
/// would silently cut them and everything below them loose.
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
    if organization_on_a_cycle(&parents).is_some() {
        return Err(DirectoryError::TreeCycle);
    }
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

    #[test]
    fn loops_are_found_and_forests_pass() {
        let id = Uuid::from_u128;
        let forest = HashMap::from([
            (id(1), None),
            (id(2), Some(id(1))),
            (id(3), Some(id(2))),
            (id(4), Some(id(9))),
        ]);
        assert_eq!(organization_on_a_cycle(&forest), None);
        let own_parent = HashMap::from([(id(1), Some(id(1)))]);
        assert_eq!(organization_on_a_cycle(&own_parent), Some(id(1)));
        // A loop high up, with a branch hanging below it.
        let looped = HashMap::from([
            (id(1), Some(id(3))),
            (id(2), Some(id(1))),
            (id(3), Some(id(2))),
            (id(4), Some(id(3))),
            (id(5), None),
        ]);
        assert!(organization_on_a_cycle(&looped).is_some());
    }
}
