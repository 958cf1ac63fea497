//! Who may call each preferences endpoint (the authorization matrix,
//! docs/security.md). Handlers keep their own checks; the checks that depend
//! on the input stay there too (`GET /auth/sidebar/preferences?roleId=` needs
//! `auth.sidebar.manage`, the list needs nothing more than a caller).

use stoa_core::http::Access::{Authenticated, AuthenticatedByHandler, Features};
use stoa_core::http::ErrorShape::*;
use stoa_core::http::Operation;

pub const OPERATIONS: &[Operation] = &[
    Operation::get("/auth/users/consents", Features(&["auth.users.edit"])).errors(E),
    // Navigation: the admin nav resolves the scope from its own query.
    Operation::get("/auth/admin/nav", AuthenticatedByHandler).errors(E),
    Operation::get("/auth/sidebar/preferences", Authenticated).errors(E),
    Operation::put(
        "/auth/sidebar/preferences",
        Features(&["auth.sidebar.manage"]),
    )
    .errors(B("Invalid payload"))
    .bad_json("Invalid JSON"),
    Operation::delete(
        "/auth/sidebar/preferences",
        Features(&["auth.sidebar.manage"]),
    )
    .errors(E),
    Operation::get("/auth/sidebar/variants", Authenticated).errors(E),
    Operation::post("/auth/sidebar/variants", Features(&["auth.sidebar.manage"]))
        .errors(B("Invalid payload")),
    Operation::get("/auth/sidebar/variants/{id}", Authenticated).errors(E),
    Operation::put(
        "/auth/sidebar/variants/{id}",
        Features(&["auth.sidebar.manage"]),
    )
    .errors(B("Invalid payload")),
    Operation::delete(
        "/auth/sidebar/variants/{id}",
        Features(&["auth.sidebar.manage"]),
    )
    .errors(E),
    Operation::put("/auth/sidebar/variants", Features(&["auth.sidebar.manage"]))
        .errors(B("Invalid payload")),
    Operation::delete("/auth/sidebar/variants", Features(&["auth.sidebar.manage"])).errors(E),
];
