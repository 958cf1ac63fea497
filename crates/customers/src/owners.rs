//! Who may own a deal: a live user of the deal's tenant, looked up through
//! the `stoa_acl::UserDirectory` the module is built with
//! ([`crate::module`]): the routes, the bulk jobs, the AI tools, the rule
//! writer and the undo handlers all hold the same one.

use diesel_async::AsyncPgConnection;
use stoa_acl::UserDirectory;
use stoa_core::AppError;
use uuid::Uuid;

use crate::error::CustomersError;

/// 400 `Owner not found in this tenant` unless `owner` is a live user of `tenant`.
pub async fn check(
    users: &dyn UserDirectory,
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    owner: Uuid,
) -> Result<(), AppError> {
    match users.user(conn, owner).await? {
        Some(user) if user.tenant_id == Some(tenant) => Ok(()),
        _ => Err(CustomersError::OwnerNotFound.into()),
    }
}
