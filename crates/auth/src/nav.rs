//! The auth module's backend pages in the admin navigation (built by
//! stoa-preferences' `GET /auth/admin/nav`).

use stoa_acl::{NavEntry, NavPlacement};

/// The auth module's backend pages.
pub const NAV: &[NavEntry] = &[
    NavEntry {
        id: "auth.users",
        module: "auth",
        placement: NavPlacement::Main,
        group_id: "auth",
        group_label: "Users & access",
        href: "/backend/users",
        title: "Users",
        features: &["auth.users.list"],
        order: 10,
        icon: Some("users"),
    },
    NavEntry {
        id: "auth.roles",
        module: "auth",
        placement: NavPlacement::Main,
        group_id: "auth",
        group_label: "Users & access",
        href: "/backend/roles",
        title: "Roles",
        features: &["auth.roles.list"],
        order: 20,
        icon: Some("shield"),
    },
    NavEntry {
        id: "auth.features",
        module: "auth",
        placement: NavPlacement::Settings,
        group_id: "auth",
        group_label: "Users & access",
        href: "/backend/settings/features",
        title: "Feature catalog",
        features: &["auth.acl.manage"],
        order: 20,
        icon: Some("key"),
    },
    NavEntry {
        id: "auth.profile.password",
        module: "auth",
        placement: NavPlacement::Profile,
        group_id: "account",
        group_label: "Account",
        href: "/backend/profile/change-password",
        title: "Change password",
        features: &[],
        order: 10,
        icon: Some("key"),
    },
];
