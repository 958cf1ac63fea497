//! Who may call each customers endpoint (the authorization matrix,
//! docs/security.md), with each route's error shape (the reference notes'
//! validation-errors.md: A for the CRUD bodies, H for the bulk routes, whose
//! every error, the matrix's 401 and 403 included, carries the bulk envelope).

use stoa_core::http::Access::Features;
use stoa_core::http::ErrorEnvelope::Bulk;
use stoa_core::http::ErrorShape::*;
use stoa_core::http::Operation;

use crate::{DEALS_MANAGE, DEALS_VIEW, PIPELINES_MANAGE, PIPELINES_VIEW};

pub const OPERATIONS: &[Operation] = &[
    Operation::post(
        "/customers/deals/bulk-update-owner",
        Features(&[DEALS_MANAGE]),
    )
    .errors(H)
    .envelope(Bulk),
    Operation::post(
        "/customers/deals/bulk-update-stage",
        Features(&[DEALS_MANAGE]),
    )
    .errors(H)
    .envelope(Bulk),
    Operation::get("/customers/deals", Features(&[DEALS_VIEW])).errors(A),
    Operation::post("/customers/deals", Features(&[DEALS_MANAGE])).errors(A),
    Operation::put("/customers/deals", Features(&[DEALS_MANAGE])).errors(A),
    Operation::delete("/customers/deals", Features(&[DEALS_MANAGE])).errors(E),
    Operation::get("/customers/deals/{id}", Features(&[DEALS_VIEW])).errors(E),
    Operation::put("/customers/deals/{id}", Features(&[DEALS_MANAGE])).errors(A),
    Operation::delete("/customers/deals/{id}", Features(&[DEALS_MANAGE])).errors(E),
    Operation::get("/customers/pipelines", Features(&[PIPELINES_VIEW])).errors(A),
    Operation::post("/customers/pipelines", Features(&[PIPELINES_MANAGE])).errors(A),
    Operation::put("/customers/pipelines", Features(&[PIPELINES_MANAGE])).errors(A),
    Operation::delete("/customers/pipelines", Features(&[PIPELINES_MANAGE])).errors(E),
    Operation::put("/customers/pipelines/{id}", Features(&[PIPELINES_MANAGE])).errors(A),
    Operation::delete("/customers/pipelines/{id}", Features(&[PIPELINES_MANAGE])).errors(E),
    Operation::get("/customers/pipeline-stages", Features(&[PIPELINES_VIEW])).errors(A),
    Operation::post("/customers/pipeline-stages", Features(&[PIPELINES_MANAGE])).errors(A),
    Operation::put("/customers/pipeline-stages", Features(&[PIPELINES_MANAGE])).errors(A),
    Operation::delete("/customers/pipeline-stages", Features(&[PIPELINES_MANAGE])).errors(E),
    Operation::post(
        "/customers/pipeline-stages/reorder",
        Features(&[PIPELINES_MANAGE]),
    )
    .errors(A),
    Operation::put(
        "/customers/pipeline-stages/{id}",
        Features(&[PIPELINES_MANAGE]),
    )
    .errors(A),
    Operation::delete(
        "/customers/pipeline-stages/{id}",
        Features(&[PIPELINES_MANAGE]),
    )
    .errors(E),
];
