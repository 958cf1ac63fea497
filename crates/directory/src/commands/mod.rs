//! Directory mutations as commands: organizations are undoable (create, update,
//! delete), tenants are logged but not undoable (as in the reference).
//!
//! Undo and redo go through the shared `stoa_core::command::StateHandler`:
//! [`OrganizationSnapshot`] implements `Tracked`.

mod organizations;
mod snapshot;
mod tenants;

use std::collections::HashMap;

use stoa_core::AppError;
use uuid::Uuid;

use crate::error::DirectoryError;

pub use organizations::{
    CreateOrganizationCommand, DeleteOrganizationCommand, UpdateOrganizationCommand,
};
pub use snapshot::{OrganizationSnapshot, handlers};
pub use tenants::TenantCommand;

pub const ORGANIZATION_KIND: &str = "directory.organization";
pub const TENANT_KIND: &str = "directory.tenant";

fn missing() -> AppError {
    DirectoryError::OrganizationNotFound.into()
}

/// The children a change re-parents and the parents they leave.
fn moved_children(parents: &HashMap<Uuid, Option<Uuid>>) -> Vec<Option<Uuid>> {
    parents
        .iter()
        .flat_map(|(child, parent)| [Some(*child), *parent])
        .collect()
}
