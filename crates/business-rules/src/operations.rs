//! Who may call each business-rules endpoint, and the shape of its input
//! errors (the reference's, `validation-errors.md`).

use stoa_core::http::Access::Features;
use stoa_core::http::ErrorShape::*;
use stoa_core::http::Operation;

use crate::{API_KEYS_CREATE, EXECUTE, MANAGE, MANAGE_SETS, VIEW, VIEW_LOGS};

const BAD_JSON: &str = "Invalid JSON body";

pub const OPERATIONS: &[Operation] = &[
    Operation::get("/business_rules/rules", Features(&[VIEW])).errors(E),
    Operation::post("/business_rules/rules", Features(&[MANAGE]))
        .errors(G)
        .bad_json(BAD_JSON),
    Operation::put("/business_rules/rules", Features(&[MANAGE]))
        .errors(G)
        .bad_json(BAD_JSON),
    Operation::delete("/business_rules/rules", Features(&[MANAGE])).errors(E),
    Operation::get("/business_rules/rules/{id}", Features(&[VIEW])).errors(E),
    Operation::post(
        "/business_rules/rules/{id}/webhook-secret",
        Features(&[MANAGE]),
    )
    .errors(E),
    Operation::get("/business_rules/sets", Features(&[VIEW])).errors(E),
    Operation::post("/business_rules/sets", Features(&[MANAGE_SETS]))
        .errors(G)
        .bad_json(BAD_JSON),
    Operation::put("/business_rules/sets", Features(&[MANAGE_SETS]))
        .errors(G)
        .bad_json(BAD_JSON),
    Operation::delete("/business_rules/sets", Features(&[MANAGE_SETS])).errors(E),
    Operation::get("/business_rules/sets/{id}", Features(&[VIEW])).errors(E),
    Operation::post(
        "/business_rules/sets/{id}/members",
        Features(&[MANAGE_SETS]),
    )
    .errors(G)
    .bad_json(BAD_JSON),
    Operation::put(
        "/business_rules/sets/{id}/members",
        Features(&[MANAGE_SETS]),
    )
    .errors(G)
    .bad_json(BAD_JSON),
    Operation::delete(
        "/business_rules/sets/{id}/members",
        Features(&[MANAGE_SETS]),
    )
    .errors(E),
    Operation::post("/business_rules/execute", Features(&[EXECUTE]))
        .errors(G)
        .bad_json(BAD_JSON),
    Operation::post("/business_rules/execute/{ruleId}", Features(&[EXECUTE]))
        .errors(G)
        .bad_json(BAD_JSON),
    Operation::get("/business_rules/logs", Features(&[VIEW_LOGS])).errors(E),
    Operation::get("/business_rules/logs/{id}", Features(&[VIEW_LOGS])).errors(E),
    Operation::get(
        "/business_rules/platform-call-options",
        Features(&[MANAGE, API_KEYS_CREATE]),
    )
    .errors(E),
];
