//! Who may call each dashboards endpoint, and the shape of its input errors
//! (the reference's, `validation-errors.md`).

use stoa_core::http::Access::Features;
use stoa_core::http::ErrorShape::*;
use stoa_core::http::Operation;

use crate::{ANALYTICS_VIEW, ASSIGN, CONFIGURE, VIEW};

pub const OPERATIONS: &[Operation] = &[
    Operation::get("/dashboards/layout", Features(&[VIEW])).errors(E),
    Operation::put("/dashboards/layout", Features(&[CONFIGURE]))
        .errors(C("Invalid layout payload"))
        .bad_json("Invalid JSON body"),
    Operation::patch("/dashboards/layout/{itemId}", Features(&[CONFIGURE]))
        .errors(C("Invalid payload")),
    Operation::get("/dashboards/widgets/catalog", Features(&[ASSIGN])).errors(E),
    Operation::get("/dashboards/roles/widgets", Features(&[ASSIGN])).errors(E),
    Operation::put("/dashboards/roles/widgets", Features(&[ASSIGN])).errors(C("Invalid payload")),
    Operation::get("/dashboards/users/widgets", Features(&[ASSIGN])).errors(E),
    Operation::put("/dashboards/users/widgets", Features(&[ASSIGN])).errors(C("Invalid payload")),
    Operation::post("/dashboards/widgets/data", Features(&[ANALYTICS_VIEW]))
        .errors(C("Invalid request payload"))
        .bad_json("Invalid JSON body"),
    Operation::post(
        "/dashboards/widgets/data/batch",
        Features(&[ANALYTICS_VIEW]),
    )
    .errors(C("Invalid request payload"))
    .bad_json("Invalid JSON body"),
];
