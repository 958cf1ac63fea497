//! Who may call each directory endpoint (the authorization matrix,
//! docs/security.md). Tenant administration also needs a super admin; the
//! handlers check that, the declaration carries the feature.

use stoa_core::http::Access::{Authenticated, Features, Public};
use stoa_core::http::Operation;

pub const OPERATIONS: &[Operation] = &[
    Operation::get("/directory/tenants", Features(&["directory.tenants.view"])),
    Operation::post(
        "/directory/tenants",
        Features(&["directory.tenants.manage"]),
    ),
    Operation::put(
        "/directory/tenants",
        Features(&["directory.tenants.manage"]),
    ),
    Operation::delete(
        "/directory/tenants",
        Features(&["directory.tenants.manage"]),
    ),
    // The login page resolves a tenant or organization before anyone signs in.
    Operation::get("/directory/tenants/lookup", Public),
    Operation::get("/directory/organizations/lookup", Public),
    Operation::get(
        "/directory/organizations",
        Features(&["directory.organizations.view"]),
    ),
    Operation::post(
        "/directory/organizations",
        Features(&["directory.organizations.manage"]),
    ),
    Operation::put(
        "/directory/organizations",
        Features(&["directory.organizations.manage"]),
    ),
    Operation::delete(
        "/directory/organizations",
        Features(&["directory.organizations.manage"]),
    ),
    Operation::get("/directory/organization-switcher", Authenticated),
];
