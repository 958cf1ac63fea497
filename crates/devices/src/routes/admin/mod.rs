//! `/devices/admin/devices[/{id}]`: every user's devices in the caller's
//! tenant and organizations (`devices.admin`). One handler per file.

pub mod delete;
pub mod delete_by_query;
pub mod get;
pub mod list;
pub mod register;
pub mod update;
pub mod update_by_body;
