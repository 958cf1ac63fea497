//! Who may call each progress endpoint (the authorization matrix, docs/security.md).

use stoa_core::http::Access::Features;
use stoa_core::http::Operation;

pub const OPERATIONS: &[Operation] = &[
    Operation::get("/progress/active", Features(&["progress.view"])),
    Operation::get("/progress/jobs", Features(&["progress.view"])),
    Operation::post("/progress/jobs", Features(&["progress.create"])),
    Operation::get("/progress/jobs/{id}", Features(&["progress.view"])),
    Operation::put("/progress/jobs/{id}", Features(&["progress.update"])),
    Operation::delete("/progress/jobs/{id}", Features(&["progress.cancel"])),
    Operation::put("/progress/jobs", Features(&["progress.update"])),
    Operation::delete("/progress/jobs", Features(&["progress.cancel"])),
];
