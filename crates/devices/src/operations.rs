//! Who may call each devices endpoint (the authorization matrix,
//! docs/security.md). Listing another user's devices (`userId`) also needs
//! `devices.admin`, which the handler checks.

use stoa_core::http::Access::Features;
use stoa_core::http::ErrorShape::*;
use stoa_core::http::Operation;

use crate::{ADMIN, MANAGE, VIEW};

pub const OPERATIONS: &[Operation] = &[
    Operation::get("/devices", Features(&[VIEW])).errors(B("")),
    Operation::post("/devices", Features(&[MANAGE])).errors(B("")),
    Operation::put("/devices/{id}", Features(&[MANAGE])).errors(B("")),
    Operation::delete("/devices/{id}", Features(&[MANAGE])).errors(B("")),
    Operation::put("/devices", Features(&[MANAGE])).errors(B("")),
    Operation::delete("/devices", Features(&[MANAGE])).errors(B("")),
    Operation::get("/devices/admin/devices", Features(&[ADMIN])).errors(B("")),
    Operation::post("/devices/admin/devices", Features(&[ADMIN])).errors(B("")),
    Operation::get("/devices/admin/devices/{id}", Features(&[ADMIN])).errors(B("")),
    Operation::put("/devices/admin/devices/{id}", Features(&[ADMIN])).errors(B("")),
    Operation::delete("/devices/admin/devices/{id}", Features(&[ADMIN])).errors(B("")),
    Operation::put("/devices/admin/devices", Features(&[ADMIN])).errors(B("")),
    Operation::delete("/devices/admin/devices", Features(&[ADMIN])).errors(B("")),
];
