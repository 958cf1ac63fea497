//! The feature registry: what each module declares it checks.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use stoa_core::command::{WriteGuard, WriteGuards};
use stoa_core::http::{Access, Operation};
use utoipa::ToSchema;

use crate::accounts::RoleDirectory;
use crate::provision::{SeedRoles, Seeders, TenantSeeder};
use crate::slots::Slots;

/// A feature a module checks, as listed in the feature catalog.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct Feature {
    /// `module.action`, e.g. `devices.manage`.
    pub id: &'static str,
    pub title: &'static str,
    /// The owning module's id, e.g. `devices`.
    pub module: &'static str,
}

/// A module in the catalog.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct ModuleInfo {
    pub id: &'static str,
    pub title: &'static str,
}

/// Where a backend page appears in the admin navigation (`GET /auth/admin/nav`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NavPlacement {
    /// A sidebar group (`groups`).
    Main,
    /// A settings section (`settingsSections`).
    Settings,
    /// A profile section (`profileSections`).
    Profile,
}

/// A backend page a module declares, shown to callers holding its features.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NavEntry {
    /// Stable id, e.g. `auth.users`.
    pub id: &'static str,
    pub module: &'static str,
    pub placement: NavPlacement,
    /// The group or section id, e.g. `settings.auth`.
    pub group_id: &'static str,
    /// The group or section label, e.g. `Users & access`.
    pub group_label: &'static str,
    pub href: &'static str,
    pub title: &'static str,
    /// Every feature needed to see the page.
    pub features: &'static [&'static str],
    /// Position inside the group (ascending).
    pub order: i32,
    pub icon: Option<&'static str>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RegistryError {
    #[error("feature `{0}` is registered twice")]
    Duplicate(&'static str),
    #[error("feature `{id}` does not belong to module `{module}`")]
    WrongModule {
        id: &'static str,
        module: &'static str,
    },
    #[error("operation `{0}` is declared twice")]
    DuplicateOperation(String),
    #[error("operation `{operation}` requires `{feature}`, which no module registers")]
    UnknownFeature {
        operation: String,
        feature: &'static str,
    },
    #[error("`{0}` is declared twice in its registry slot")]
    DuplicateSlot(&'static str),
    #[error("`{id}`: {message}")]
    InvalidSlot {
        id: &'static str,
        message: &'static str,
    },
    #[error("`{slot}` requires `{feature}`, which no module registers")]
    UnknownSlotFeature {
        slot: &'static str,
        feature: &'static str,
    },
}

/// Every registered feature and module.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    features: BTreeMap<&'static str, Feature>,
    modules: BTreeMap<&'static str, ModuleInfo>,
    /// Grants each default role (`superadmin`, `admin`, `employee`) gets in a
    /// new tenant, contributed by every module (additive).
    role_defaults: BTreeMap<&'static str, Vec<&'static str>>,
    /// Backend pages, in registration order.
    nav: Vec<NavEntry>,
    /// What a new tenant starts with (`crate::provision`).
    seeders: Seeders,
    /// Where seeders look the default roles up (the accounts owner's).
    seed_roles: SeedRoles,
    /// Every operation's declared access (the authorization matrix).
    operations: Vec<Operation>,
    /// Checks every command, undo and redo passes before it commits
    /// (`stoa_core::command::guard`); they reach the command bus on the
    /// caller's `Actor` (`AuthContext::actor`).
    write_guards: WriteGuards,
    /// Widgets, analytics sources, AI tools and rule entities
    /// (`crate::slots`).
    slots: Slots,
}

impl Registry {
    pub(crate) fn slots(&self) -> &Slots {
        &self.slots
    }

    pub(crate) fn slots_mut(&mut self) -> &mut Slots {
        &mut self.slots
    }

    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a module and its features. A feature id must start with its
    /// module's id and may be registered once.
    pub fn register(
        &mut self,
        module: ModuleInfo,
        features: &[Feature],
    ) -> Result<(), RegistryError> {
        for feature in features {
            if feature.module != module.id || !feature.id.starts_with(module.id) {
                return Err(RegistryError::WrongModule {
                    id: feature.id,
                    module: module.id,
                });
            }
            if self.features.contains_key(feature.id) {
                return Err(RegistryError::Duplicate(feature.id));
            }
        }
        for feature in features {
            self.features.insert(feature.id, feature.clone());
        }
        self.modules.insert(module.id, module);
        Ok(())
    }

    /// Adds grants a default role receives when a tenant is created.
    pub fn add_role_defaults(&mut self, role: &'static str, grants: &[&'static str]) {
        let list = self.role_defaults.entry(role).or_default();
        for grant in grants {
            if !list.contains(grant) {
                list.push(grant);
            }
        }
    }

    /// Declares backend pages for the admin navigation; an id registered again
    /// replaces the earlier entry.
    pub fn register_nav(&mut self, entries: &[NavEntry]) {
        for entry in entries {
            self.nav.retain(|e| e.id != entry.id);
            self.nav.push(entry.clone());
        }
    }

    /// Adds a module's seeder for new tenants; an id registered again
    /// replaces the earlier seeder.
    pub fn add_seeder(&mut self, seeder: Arc<dyn TenantSeeder>) {
        self.seeders.0.retain(|s| s.id() != seeder.id());
        self.seeders.0.push(seeder);
    }

    /// Every registered seeder, in registration order.
    pub fn seeders(&self) -> &[Arc<dyn TenantSeeder>] {
        &self.seeders.0
    }

    /// Installs the role directory seeders look a tenant's roles up in; the
    /// module that owns accounts does (`stoa_auth::base_registry`).
    pub fn provide_roles(&mut self, roles: Arc<dyn RoleDirectory>) {
        self.seed_roles.0 = Some(roles);
    }

    /// The role directory for seeders; `None` when no module owns accounts
    /// (then a tenant has no roles to seed data for).
    pub fn roles(&self) -> Option<&dyn RoleDirectory> {
        self.seed_roles.0.as_deref()
    }

    /// Adds a write guard: a check every command, undo and redo of every
    /// module passes inside its transaction and that may refuse it (422). An id
    /// registered again replaces the earlier guard.
    pub fn add_write_guard(&mut self, guard: Arc<dyn WriteGuard>) {
        self.write_guards = self.write_guards.with(guard);
    }

    /// Every registered write guard, in registration order (cheap to clone).
    pub fn write_guards(&self) -> &WriteGuards {
        &self.write_guards
    }

    /// Declares who may call each of a module's operations. Register features
    /// first: a declared feature must be registered, and an operation
    /// (method and path) may be declared once.
    pub fn register_operations(&mut self, operations: &[Operation]) -> Result<(), RegistryError> {
        for (i, op) in operations.iter().enumerate() {
            let name = || format!("{} {}", op.method.as_openapi().to_uppercase(), op.path);
            let same = |o: &Operation| o.method == op.method && o.path == op.path;
            if self.operations.iter().any(same) || operations[..i].iter().any(same) {
                return Err(RegistryError::DuplicateOperation(name()));
            }
            if let Access::Features(features) = op.access
                && let Some(feature) = features.iter().find(|f| !self.features.contains_key(*f))
            {
                return Err(RegistryError::UnknownFeature {
                    operation: name(),
                    feature,
                });
            }
        }
        self.operations.extend_from_slice(operations);
        Ok(())
    }

    /// Every declared operation.
    pub fn operations(&self) -> &[Operation] {
        &self.operations
    }

    /// Every declared backend page.
    pub fn nav(&self) -> &[NavEntry] {
        &self.nav
    }

    /// The default grants of `role` (empty for unknown roles).
    pub fn role_defaults(&self, role: &str) -> &[&'static str] {
        self.role_defaults
            .get(role)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    pub fn features(&self) -> impl Iterator<Item = &Feature> {
        self.features.values()
    }

    pub fn modules(&self) -> impl Iterator<Item = &ModuleInfo> {
        self.modules.values()
    }

    pub fn get(&self, id: &str) -> Option<&Feature> {
        self.features.get(id)
    }

    /// Whether a grant string names something real: a registered feature, a
    /// registered module's wildcard, or `*`.
    pub fn is_known_grant(&self, grant: &str) -> bool {
        grant == "*"
            || self.features.contains_key(grant)
            || grant.strip_suffix(".*").is_some_and(|m| {
                self.modules.contains_key(m)
                    || self
                        .features
                        .keys()
                        .any(|f| f.starts_with(&format!("{m}.")))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: ModuleInfo = ModuleInfo {
        id: "devices",
        title: "Devices",
    };
    const VIEW: Feature = Feature {
        id: "devices.view",
        title: "View devices",
        module: "devices",
    };

    #[test]
    fn registers_and_validates() {
        let mut reg = Registry::new();
        assert_eq!(reg.register(MODULE, &[VIEW]), Ok(()));
        assert_eq!(
            reg.register(MODULE, &[VIEW]),
            Err(RegistryError::Duplicate("devices.view"))
        );
        let stray = Feature {
            id: "auth.x",
            title: "x",
            module: "devices",
        };
        assert!(matches!(
            reg.register(MODULE, &[stray]),
            Err(RegistryError::WrongModule { .. })
        ));
        assert!(reg.is_known_grant("devices.view"));
        assert!(reg.is_known_grant("devices.*"));
        assert!(reg.is_known_grant("*"));
        assert!(!reg.is_known_grant("devices.fly"));
        assert!(!reg.is_known_grant("nothing.*"));
        assert_eq!(reg.features().count(), 1);
    }

    #[test]
    fn operations_name_registered_features_once() {
        let mut reg = Registry::new();
        reg.register(MODULE, &[VIEW]).unwrap();
        let list = Operation::get("/devices", Access::Features(&["devices.view"]));
        assert_eq!(reg.register_operations(&[list]), Ok(()));
        assert_eq!(
            reg.register_operations(&[list]),
            Err(RegistryError::DuplicateOperation("GET /devices".into()))
        );
        let fly = Operation::post("/devices/fly", Access::Features(&["devices.fly"]));
        assert!(matches!(
            reg.register_operations(&[fly]),
            Err(RegistryError::UnknownFeature {
                feature: "devices.fly",
                ..
            })
        ));
        assert_eq!(reg.operations(), &[list]);
    }
}
