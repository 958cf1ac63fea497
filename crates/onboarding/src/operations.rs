//! Who may call each route: anyone (sign-up comes before an account). The
//! routes answer 404 unless `SELF_SERVICE_ONBOARDING_ENABLED=true`.

use stoa_core::http::{Access, ErrorShape, Operation};

pub const OPERATIONS: &[Operation] = &[
    Operation::post("/onboarding/onboarding", Access::Public)
        .errors(ErrorShape::I)
        .bad_json("Invalid payload"),
    Operation::get("/onboarding/onboarding/verify", Access::Public).errors(ErrorShape::E),
    Operation::get("/onboarding/onboarding/status", Access::Public).errors(ErrorShape::E),
];
