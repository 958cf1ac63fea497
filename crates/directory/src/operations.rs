//! Who may call each directory endpoint (the authorization matrix,
//! docs/security.md). Tenant administration also needs a super admin; the
//! handlers check that, the declaration carries the feature.

use stoa_core::http::Access::{Authenticated, Features, Public};
use stoa_core::http::ErrorShape::*;
use stoa_core::http::Operation;

pub const OPERATIONS: &[Operation] = &[
    Operation::get("/directory/tenants", Features(&["directory.tenants.view"]))
        .errors(B("Invalid query parameters")),
    Operation::post(
        "/directory/tenants",
        Features(&["directory.tenants.manage"]),
    )
    .errors(A),
    Operation::put(
        "/directory/tenants",
        Features(&["directory.tenants.manage"]),
    )
    .errors(A),
    Operation::delete(
        "/directory/tenants",
        Features(&["directory.tenants.manage"]),
    )
    .errors(A),
    // The login page resolves a tenant or organization before anyone signs in.
    Operation::get("/directory/tenants/lookup", Public).errors(E),
    Operation::get("/directory/organizations/lookup", Public).errors(E),
    Operation::get(
        "/directory/organizations",
        Features(&["directory.organizations.view"]),
    )
    .errors(E),
    Operation::post(
        "/directory/organizations",
        Features(&["directory.organizations.manage"]),
    )
    .errors(A),
    Operation::put(
        "/directory/organizations",
        Features(&["directory.organizations.manage"]),
    )
    .errors(A),
    Operation::delete(
        "/directory/organizations",
        Features(&["directory.organizations.manage"]),
    )
    .errors(A),
    Operation::get("/directory/organization-switcher", Authenticated).errors(E),
];
