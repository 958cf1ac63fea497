//! Who may call each catalog endpoint (the authorization matrix,
//! docs/security.md), and the shape of each route's validation errors
//! (the reference's: the CRUD factory's A for products, the bulk envelope H
//! for the bulk delete; E where the only input is an id).

use stoa_core::http::Access::Features;
use stoa_core::http::ErrorShape::*;
use stoa_core::http::Operation;

use crate::{MANAGE, VIEW};

pub const OPERATIONS: &[Operation] = &[
    Operation::get("/catalog/products", Features(&[VIEW])).errors(A),
    Operation::post("/catalog/products", Features(&[MANAGE])).errors(A),
    Operation::put("/catalog/products", Features(&[MANAGE])).errors(A),
    Operation::delete("/catalog/products", Features(&[MANAGE])).errors(E),
    Operation::get("/catalog/products/{id}", Features(&[VIEW])).errors(E),
    Operation::put("/catalog/products/{id}", Features(&[MANAGE])).errors(A),
    Operation::delete("/catalog/products/{id}", Features(&[MANAGE])).errors(E),
    // Every error in the bulk envelope, the matrix's 401 and 403 included.
    Operation::post("/catalog/bulk-delete", Features(&[MANAGE]))
        .errors(H)
        .envelope(stoa_core::http::ErrorEnvelope::Bulk),
];
