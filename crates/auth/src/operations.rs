//! Who may call each auth endpoint (the authorization matrix, docs/security.md).
//! Handlers keep their own checks; the checks that depend on the input stay
//! there too. The sidebar, navigation and consent routes are stoa-preferences'.

use stoa_core::http::Access::{Authenticated, AuthenticatedByHandler, Features, Public};
use stoa_core::http::ErrorShape::*;
use stoa_core::http::Operation;

pub const OPERATIONS: &[Operation] = &[
    // Sessions and self-service: signing in needs no session.
    Operation::post("/auth/login", Public).errors(E),
    Operation::post("/auth/logout", AuthenticatedByHandler).errors(E),
    Operation::get("/auth/autologin", Public).errors(E),
    Operation::get("/auth/session/refresh", Public).errors(E),
    Operation::post("/auth/session/refresh", Public).errors(E),
    Operation::get("/auth/profile", Authenticated).errors(E),
    Operation::put("/auth/profile", Authenticated).errors(C("Invalid profile update.")),
    Operation::post("/auth/reset", Public).errors(E),
    Operation::post("/auth/reset/confirm", Public).errors(E),
    Operation::get("/auth/locale", Public).errors(E),
    Operation::post("/auth/locale", Public).errors(E),
    Operation::post("/auth/feature-check", Authenticated).errors(E),
    Operation::get("/auth/features", Features(&["auth.acl.manage"])).errors(E),
    // Account administration.
    Operation::get("/auth/users", Features(&["auth.users.list"])).errors(E),
    Operation::post("/auth/users", Features(&["auth.users.create"])).errors(A),
    Operation::put("/auth/users", Features(&["auth.users.edit"])).errors(A),
    Operation::delete("/auth/users", Features(&["auth.users.delete"])).errors(E),
    Operation::post(
        "/auth/users/resend-invite",
        Features(&["auth.users.create"]),
    )
    .errors(D),
    Operation::get("/auth/roles", Features(&["auth.roles.list"])).errors(E),
    Operation::post("/auth/roles", Features(&["auth.roles.manage"])).errors(A),
    Operation::put("/auth/roles", Features(&["auth.roles.manage"])).errors(A),
    Operation::delete("/auth/roles", Features(&["auth.roles.manage"])).errors(E),
    Operation::get("/auth/roles/acl", Features(&["auth.acl.manage"])).errors(E),
    Operation::put("/auth/roles/acl", Features(&["auth.acl.manage"])).errors(E),
    Operation::get("/auth/users/acl", Features(&["auth.acl.manage"])).errors(E),
    Operation::put("/auth/users/acl", Features(&["auth.acl.manage"])).errors(E),
];
