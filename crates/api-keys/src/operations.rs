//! Who may call each API-key endpoint (the authorization matrix, docs/security.md).

use stoa_core::http::Access::Features;
use stoa_core::http::ErrorShape::*;
use stoa_core::http::Operation;

use crate::routes::{CREATE, DELETE, VIEW};

pub const OPERATIONS: &[Operation] = &[
    Operation::get("/api_keys/keys", Features(&[VIEW])).errors(E),
    Operation::post("/api_keys/keys", Features(&[CREATE])).errors(A),
    Operation::delete("/api_keys/keys", Features(&[DELETE])).errors(E),
];
