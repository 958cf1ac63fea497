//! The admin navigation payload (`GET /auth/admin/nav`): the backend pages
//! modules declare ([`stoa_acl::NavEntry`]) that the caller may open, grouped
//! and ordered, with the first role sidebar preference of the caller's roles
//! and then the caller's own preference applied.
//!
//! Building the payload is pure ([`build`]); the route reads the two
//! preferences in one query and the selected organization in another.

mod dto;
mod preferences;

use stoa_acl::{AuthContext, NavEntry, NavPlacement, Registry};

use preferences::adopt_defaults;

pub use dto::{
    Brand, BrandLogo, CurrentOrganization, NavGroup, NavInput, NavItem, NavPayload, NavQuery,
    OrganizationInfo, Section, SectionItem,
};
pub use preferences::apply;

/// Whether the caller may navigate at all: an organization restriction that
/// resolved to nothing leaves them no pages (and no features).
fn may_navigate(ctx: &AuthContext) -> bool {
    ctx.is_super_admin()
        || ctx
            .acl
            .allowed_organization_ids
            .as_ref()
            .is_none_or(|ids| !ids.is_empty())
}

fn visible<'r>(
    registry: &'r Registry,
    ctx: &AuthContext,
    placement: NavPlacement,
) -> impl Iterator<Item = &'r NavEntry> {
    let allowed = may_navigate(ctx);
    registry.nav().iter().filter(move |e| {
        e.placement == placement && allowed && e.features.iter().all(|f| ctx.has(f))
    })
}

/// Entries grouped by group id, groups in order of first appearance, items by
/// (order, title).
fn grouped<'r>(
    entries: impl Iterator<Item = &'r NavEntry>,
) -> Vec<(&'r NavEntry, Vec<&'r NavEntry>)> {
    let mut groups: Vec<(&NavEntry, Vec<&NavEntry>)> = Vec::new();
    for entry in entries {
        match groups
            .iter_mut()
            .find(|(g, _)| g.group_id == entry.group_id)
        {
            Some((_, items)) => items.push(entry),
            None => groups.push((entry, vec![entry])),
        }
    }
    for (_, items) in &mut groups {
        items.sort_by(|a, b| (a.order, a.title).cmp(&(b.order, b.title)));
    }
    groups
}

fn sections(registry: &Registry, ctx: &AuthContext, placement: NavPlacement) -> Vec<Section> {
    grouped(visible(registry, ctx, placement))
        .into_iter()
        .zip(1..)
        .map(|((group, items), order)| Section {
            id: group.group_id.to_string(),
            label: group.group_label.to_string(),
            order,
            items: items
                .into_iter()
                .map(|e| SectionItem {
                    id: e.id.to_string(),
                    label: e.title.to_string(),
                    href: e.href.to_string(),
                    order: e.order,
                    icon_name: e.icon.map(String::from),
                })
                .collect(),
        })
        .collect()
}

/// Each link and its parent path (for links at least three segments deep),
/// so the client can tell which pages belong to the section area.
fn path_prefixes(sections: &[Section]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |p: String| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    for item in sections.iter().flat_map(|s| &s.items) {
        let parts: Vec<&str> = item.href.split('/').collect();
        if parts.len() > 3 {
            push(parts[..parts.len() - 1].join("/"));
        }
        push(item.href.clone());
    }
    out
}

/// The payload for `ctx`.
pub fn build(ctx: &AuthContext, input: NavInput<'_>) -> NavPayload {
    let registry = input.registry;
    let mut groups: Vec<NavGroup> = grouped(visible(registry, ctx, NavPlacement::Main))
        .into_iter()
        .map(|(group, items)| NavGroup {
            id: group.group_id.to_string(),
            name: group.group_label.to_string(),
            default_name: group.group_label.to_string(),
            items: items
                .into_iter()
                .map(|e| NavItem {
                    id: e.id.to_string(),
                    href: e.href.to_string(),
                    title: e.title.to_string(),
                    default_title: e.title.to_string(),
                    enabled: true,
                    page_context: "main".into(),
                    icon_name: e.icon.map(String::from),
                })
                .collect(),
        })
        .collect();
    if let Some(role) = input.role_preference {
        groups = adopt_defaults(apply(groups, role));
    }
    if let Some(own) = input.user_preference {
        groups = apply(groups, own);
    }
    let settings_sections = sections(registry, ctx, NavPlacement::Settings);
    let profile_sections = sections(registry, ctx, NavPlacement::Profile);
    let granted_features = if may_navigate(ctx) {
        registry
            .features()
            .filter(|f| ctx.has(f.id))
            .map(|f| f.id.to_string())
            .collect()
    } else {
        Vec::new()
    };
    let (brand, current_organization) = match input.organization {
        Some(org) => (
            org.logo_url
                .as_deref()
                .map(str::trim)
                .filter(|u| !u.is_empty())
                .map(|src| Brand {
                    name: org.name.clone(),
                    logo: BrandLogo {
                        src: src.to_string(),
                        alt: org.name.clone(),
                        preserve_aspect_ratio: org.logo_preserve_aspect_ratio,
                    },
                }),
            Some(CurrentOrganization {
                id: org.id,
                name: org.name,
            }),
        ),
        None => (None, None),
    };
    NavPayload {
        groups,
        settings_path_prefixes: path_prefixes(&settings_sections),
        profile_path_prefixes: path_prefixes(&profile_sections),
        settings_sections,
        profile_sections,
        granted_features,
        roles: ctx.acl.roles.clone(),
        brand,
        current_organization,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use stoa_acl::{CredentialKind, ResolvedAcl};
    use uuid::Uuid;

    use super::*;
    use crate::sidebar::SidebarSettings;

    fn ctx(features: &[&str], allowed: Option<Vec<Uuid>>) -> AuthContext {
        AuthContext {
            user_id: Some(Uuid::nil()),
            session_id: None,
            api_key_id: None,
            kind: CredentialKind::Session,
            email: None,
            name: None,
            tenant_id: Some(Uuid::nil()),
            actor_tenant_id: Some(Uuid::nil()),
            home_organization_id: None,
            acl_version: None,
            guards: Default::default(),
            acl: Arc::new(ResolvedAcl {
                features: features.iter().map(|s| s.to_string()).collect(),
                roles: vec!["admin".into()],
                allowed_organization_ids: allowed,
                ..Default::default()
            }),
        }
    }

    fn registry() -> Registry {
        let mut registry = stoa_auth::base_registry().unwrap();
        crate::register(&mut registry).unwrap();
        registry
    }

    fn input(registry: &Registry) -> NavInput<'_> {
        NavInput {
            registry,
            role_preference: None,
            user_preference: None,
            organization: None,
        }
    }

    fn hrefs(payload: &NavPayload) -> Vec<&str> {
        payload
            .groups
            .iter()
            .flat_map(|g| g.items.iter().map(|i| i.href.as_str()))
            .collect()
    }

    #[test]
    fn pages_follow_features() {
        let reg = registry();
        let admin = build(&ctx(&["auth.*"], None), input(&reg));
        assert_eq!(hrefs(&admin), vec!["/backend/users", "/backend/roles"]);
        assert!(
            admin
                .granted_features
                .contains(&"auth.users.list".to_string())
        );
        assert!(!admin.granted_features.iter().any(|f| f.contains('*')));
        assert!(
            admin
                .settings_path_prefixes
                .contains(&"/backend/settings".to_string())
        );
        let nobody = build(&ctx(&[], None), input(&reg));
        assert!(nobody.groups.is_empty());
        assert!(nobody.granted_features.is_empty());
        assert_eq!(nobody.profile_sections.len(), 1);
        let boxed_in = build(&ctx(&["auth.*"], Some(vec![])), input(&reg));
        assert!(boxed_in.groups.is_empty());
        assert!(boxed_in.granted_features.is_empty());
    }

    #[test]
    fn role_then_user_preferences() {
        let reg = registry();
        let role = SidebarSettings {
            item_labels: [("/backend/users".to_string(), "People".to_string())].into(),
            group_labels: [("auth".to_string(), "Team".to_string())].into(),
            ..Default::default()
        };
        let own = SidebarSettings {
            hidden_items: vec!["auth.roles".into()],
            item_labels: [("auth.users".to_string(), "Staff".to_string())].into(),
            ..Default::default()
        };
        let payload = build(
            &ctx(&["auth.*", "directory.organizations.view"], None),
            NavInput {
                role_preference: Some(&role),
                user_preference: Some(&own),
                ..input(&reg)
            },
        );
        let auth = payload.groups.iter().find(|g| g.id == "auth").unwrap();
        assert_eq!(auth.name, "Team");
        assert_eq!(auth.default_name, "Team");
        assert_eq!(auth.items.len(), 1);
        assert_eq!(auth.items[0].title, "Staff");
        assert_eq!(auth.items[0].default_title, "People");
    }

    #[test]
    fn orders_groups_and_items() {
        let groups = vec![
            NavGroup {
                id: "a".into(),
                name: "A".into(),
                default_name: "A".into(),
                items: ["/x", "/y", "/z"]
                    .iter()
                    .map(|h| NavItem {
                        id: h.to_string(),
                        href: h.to_string(),
                        title: h.to_string(),
                        default_title: h.to_string(),
                        enabled: true,
                        page_context: "main".into(),
                        icon_name: None,
                    })
                    .collect(),
            },
            NavGroup {
                id: "b".into(),
                name: "B".into(),
                default_name: "B".into(),
                items: vec![],
            },
        ];
        let mut with_b = groups.clone();
        with_b[1].items = groups[0].items[..1].to_vec();
        let settings = SidebarSettings {
            group_order: vec!["b".into()],
            item_order: [("a".to_string(), vec!["/z".to_string()])].into(),
            ..Default::default()
        };
        let out = apply(with_b, &settings);
        assert_eq!(out[0].id, "b");
        let a: Vec<&str> = out[1].items.iter().map(|i| i.href.as_str()).collect();
        assert_eq!(a, vec!["/z", "/x", "/y"]);
        // A group left without items goes.
        assert_eq!(apply(groups, &SidebarSettings::default()).len(), 1);
    }
}
