//! Who may read a file (the file and image routes, which take optional
//! authentication). A signed-in caller sees only files of its tenant and the
//! organizations it sees (others do not exist for it: 404); a super admin
//! sees every file. Without a credential, only files of public partitions
//! are served; a private one answers 401.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use stoa_acl::{AuthContext, Reach};
use stoa_core::AppError;
use uuid::Uuid;

use crate::error::AttachmentsError;
use crate::model::{Attachment, Partition};
use crate::schema::{attachment_partitions as p, attachments as a};

/// Whether a signed-in `caller` (not a super admin) may read and change
/// `row`: its tenant, an organization it selected, and the one organization
/// rule (`AuthContext::reach`). An attachment always belongs to an
/// organization, so it is either out of reach (404) or writable: reading
/// and writing need the same reach.
pub fn sees(caller: &AuthContext, row: &Attachment) -> bool {
    caller.tenant_id == Some(row.tenant_id)
        && caller.can_see_organization(row.organization_id)
        && caller.reach(Some(row.tenant_id), Some(row.organization_id)) == Reach::Write
}

/// A file the caller may read, with its partition.
pub struct Readable {
    pub row: Attachment,
    pub partition: Partition,
}

pub async fn readable(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    caller: Option<&AuthContext>,
) -> Result<Readable, AppError> {
    let row: Option<Attachment> = a::table
        .filter(a::id.eq(id))
        .select(Attachment::as_select())
        .first(conn)
        .await
        .optional()?;
    let row = row.ok_or(AttachmentsError::NotFound)?;
    if let Some(ctx) = caller
        && !ctx.is_super_admin()
        && !sees(ctx, &row)
    {
        return Err(AttachmentsError::NotFound.into());
    }
    let partition: Option<Partition> = p::table
        .filter(p::code.eq(&row.partition_code))
        .select(Partition::as_select())
        .first(conn)
        .await
        .optional()?;
    let partition = partition.ok_or(AttachmentsError::PartitionMisconfigured)?;
    if caller.is_none() && !partition.is_public {
        return Err(AttachmentsError::Unauthorized.into());
    }
    Ok(Readable { row, partition })
}
