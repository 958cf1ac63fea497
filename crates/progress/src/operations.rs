//! Who may call each progress endpoint (the authorization matrix, docs/security.md).

use stoa_core::http::Access::Features;
use stoa_core::http::ErrorShape::*;
use stoa_core::http::Operation;

pub const OPERATIONS: &[Operation] = &[
    Operation::get("/progress/active", Features(&["progress.view"])).errors(E),
    Operation::get("/progress/jobs", Features(&["progress.view"])).errors(E),
    Operation::post("/progress/jobs", Features(&["progress.create"])).errors(B("Invalid input")),
    Operation::get("/progress/jobs/{id}", Features(&["progress.view"])).errors(E),
    Operation::put("/progress/jobs/{id}", Features(&["progress.update"]))
        .errors(B("Invalid input")),
    Operation::delete("/progress/jobs/{id}", Features(&["progress.cancel"])).errors(E),
    Operation::put("/progress/jobs", Features(&["progress.update"])).errors(B("Invalid input")),
    Operation::delete("/progress/jobs", Features(&["progress.cancel"])).errors(E),
];
