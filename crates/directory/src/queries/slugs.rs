//! Organization slugs: derived from the name, unique among the tenant's live
//! organizations.

use std::collections::HashSet;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_core::search::escape_like;
use uuid::Uuid;

use super::Result;
use crate::schema::organizations;

/// A slug from a name: lower-case ASCII letters and digits, other runs become `-`.
pub fn slugify(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-');
    let out: String = out.chars().take(140).collect();
    if out.is_empty() {
        "organization".into()
    } else {
        out
    }
}

/// `base`, or `base-1`, `base-2`, ... whichever is free in the tenant.
pub(super) async fn unique_slug(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    base: &str,
    except: Option<Uuid>,
) -> Result<String> {
    let taken: HashSet<String> = organizations::table
        .filter(organizations::tenant_id.eq(tenant))
        .filter(organizations::deleted_at.is_null())
        .filter(organizations::id.ne(except.unwrap_or(Uuid::nil())))
        .filter(
            organizations::slug
                .eq(base)
                .or(organizations::slug.like(format!("{}-%", escape_like(base)))),
        )
        .select(organizations::slug)
        .load::<Option<String>>(conn)
        .await?
        .into_iter()
        .flatten()
        .collect();
    if !taken.contains(base) {
        return Ok(base.to_string());
    }
    Ok((1..)
        .map(|n| format!("{base}-{n}"))
        .find(|s| !taken.contains(s))
        .unwrap_or_else(|| format!("{base}-{}", Uuid::new_v4().simple())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(slugify("Acme Corp"), "acme-corp");
        assert_eq!(slugify("  ÄÖ  "), "organization");
        assert_eq!(slugify("R&D / Lab 2"), "r-d-lab-2");
    }
}
