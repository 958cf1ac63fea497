//! Who may call the system endpoints: everyone (load balancers, docs readers).

use crate::http::{Access, Operation};

/// The operations of the system endpoints (`/version`, `/health`, `/docs`).
pub const OPERATIONS: &[Operation] = &[
    Operation::get("/version", Access::Public),
    Operation::get("/health", Access::Public),
    Operation::get("/docs", Access::Public),
    Operation::get("/docs/openapi.json", Access::Public),
];
