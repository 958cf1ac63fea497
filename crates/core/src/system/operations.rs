//! Who may call the system endpoints: everyone (load balancers, docs readers).

use crate::http::{Access, ErrorShape, Operation};

/// The operations of the system endpoints (`/version`, `/health`, `/docs`).
pub const OPERATIONS: &[Operation] = &[
    Operation::get("/version", Access::Public).errors(ErrorShape::E),
    Operation::get("/health", Access::Public).errors(ErrorShape::E),
    Operation::get("/docs", Access::Public).errors(ErrorShape::E),
    Operation::get("/docs/openapi.json", Access::Public).errors(ErrorShape::E),
    Operation::get("/docs/{asset}", Access::Public).errors(ErrorShape::E),
];
