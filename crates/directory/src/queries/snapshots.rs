//! Organization snapshots for undo: their SQL. Loads an organization as a
//! [`OrganizationSnapshot`] (deleted or not), writes one back, and reads or
//! restores the parents of re-parented children.

use std::collections::HashMap;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::AppError;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::commands::OrganizationSnapshot;
use crate::schema::organizations;

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
pub(crate) async fn snapshot(
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

/// Writes a snapshot's fields back (reviving or deleting the row as it says),
/// and makes its listed children its children again.
pub(crate) async fn restore(
    conn: &mut AsyncPgConnection,
    s: &OrganizationSnapshot,
) -> Result<(), AppError> {
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
pub(crate) async fn restore_parents(
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

/// The current parents of `children` (what a re-parenting takes away).
pub(crate) async fn previous_parents(
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
