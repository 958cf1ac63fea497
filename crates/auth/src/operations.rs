//! Who may call each auth endpoint (the authorization matrix, docs/security.md).
//! Handlers keep their own checks; the checks that depend on the input stay
//! there too. The sidebar, navigation and consent routes are stoa-preferences'.

use stoa_core::http::Access::{Authenticated, AuthenticatedByHandler, Features, Public};
use stoa_core::http::Operation;

pub const OPERATIONS: &[Operation] = &[
    // Sessions and self-service: signing in needs no session.
    Operation::post("/auth/login", Public),
    Operation::post("/auth/logout", AuthenticatedByHandler),
    Operation::get("/auth/autologin", Public),
    Operation::get("/auth/session/refresh", Public),
    Operation::post("/auth/session/refresh", Public),
    Operation::get("/auth/profile", Authenticated),
    Operation::put("/auth/profile", Authenticated),
    Operation::post("/auth/reset", Public),
    Operation::post("/auth/reset/confirm", Public),
    Operation::get("/auth/locale", Public),
    Operation::post("/auth/locale", Public),
    Operation::post("/auth/feature-check", Authenticated),
    Operation::get("/auth/features", Features(&["auth.acl.manage"])),
    // Account administration.
    Operation::get("/auth/users", Features(&["auth.users.list"])),
    Operation::post("/auth/users", Features(&["auth.users.create"])),
    Operation::put("/auth/users", Features(&["auth.users.edit"])),
    Operation::delete("/auth/users", Features(&["auth.users.delete"])),
    Operation::post(
        "/auth/users/resend-invite",
        Features(&["auth.users.create"]),
    ),
    Operation::get("/auth/roles", Features(&["auth.roles.list"])),
    Operation::post("/auth/roles", Features(&["auth.roles.manage"])),
    Operation::put("/auth/roles", Features(&["auth.roles.manage"])),
    Operation::delete("/auth/roles", Features(&["auth.roles.manage"])),
    Operation::get("/auth/roles/acl", Features(&["auth.acl.manage"])),
    Operation::put("/auth/roles/acl", Features(&["auth.acl.manage"])),
    Operation::get("/auth/users/acl", Features(&["auth.acl.manage"])),
    Operation::put("/auth/users/acl", Features(&["auth.acl.manage"])),
];
