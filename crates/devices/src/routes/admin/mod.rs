//! `/devices/admin/devices[/{id}]` routes of their own: a detail and an
//! admin's registration for another user (`devices.admin`). The admin list,
//! update and delete are in [`super::list`], [`super::update`] and
//! [`super::delete`], beside the caller's own forms of the same write.

pub mod get;
pub mod register;
