//! Who may call each devices endpoint (the authorization matrix,
//! docs/security.md). Listing another user's devices (`userId`) also needs
//! `devices.admin`, which the handler checks.

use stoa_core::http::Access::Features;
use stoa_core::http::Operation;

use crate::{ADMIN, MANAGE, VIEW};

pub const OPERATIONS: &[Operation] = &[
    Operation::get("/devices", Features(&[VIEW])),
    Operation::post("/devices", Features(&[MANAGE])),
    Operation::put("/devices/{id}", Features(&[MANAGE])),
    Operation::delete("/devices/{id}", Features(&[MANAGE])),
    Operation::put("/devices", Features(&[MANAGE])),
    Operation::delete("/devices", Features(&[MANAGE])),
    Operation::get("/devices/admin/devices", Features(&[ADMIN])),
    Operation::post("/devices/admin/devices", Features(&[ADMIN])),
    Operation::get("/devices/admin/devices/{id}", Features(&[ADMIN])),
    Operation::put("/devices/admin/devices/{id}", Features(&[ADMIN])),
    Operation::delete("/devices/admin/devices/{id}", Features(&[ADMIN])),
    Operation::put("/devices/admin/devices", Features(&[ADMIN])),
    Operation::delete("/devices/admin/devices", Features(&[ADMIN])),
];
