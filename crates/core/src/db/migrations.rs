//! Migrations by owner: each module hands out its own.
//!
//! Every module's migrations live in the workspace's `migrations/`, one
//! folder each, named `<version>_<module>_<what>`; the module part names the
//! owner (`core`, `jobs`, `progress`, `customers`, `business_rules`, ...).
//! `stoa migrate` applies them all ([`super::MIGRATIONS`]). A program that
//! embeds a few crates applies only theirs: each crate's `migrations()` is a
//! [`Migrations`] of its own module, and the program joins them (and its own
//! embedded migrations) into one source that diesel applies in version
//! order, as it would the whole folder:
//!
//! ```rust,ignore
//! let source = stoa_core::db::migrations::core()
//!     .and(stoa_jobs::migrations())
//!     .and(stoa_customers::migrations())
//!     .with(OWN_MIGRATIONS);
//! stoa_core::db::run_migrations_from(&url, source).await?;
//! ```
//!
//! Diesel records a migration by its version alone (the part before the
//! first `_`), so renaming a folder's module part moves it to another owner
//! without a database noticing.

use diesel::migration::{Migration, MigrationSource};
use diesel::pg::Pg;
use diesel_migrations::EmbeddedMigrations;

use super::MIGRATIONS;

/// The migrations of some modules (and a program's own).
pub struct Migrations {
    modules: Vec<&'static str>,
    own: Vec<EmbeddedMigrations>,
}

impl Migrations {
    /// The migrations owned by `module` (the module part of their folder).
    pub fn module(module: &'static str) -> Self {
        Self {
            modules: vec![module],
            own: Vec::new(),
        }
    }

    /// These and `other`'s.
    pub fn and(mut self, other: Self) -> Self {
        self.modules.extend(other.modules);
        self.own.extend(other.own);
        self
    }

    /// These and a program's own embedded migrations (its versions must not
    /// be any module's).
    pub fn with(mut self, own: EmbeddedMigrations) -> Self {
        self.own.push(own);
        self
    }

    /// Whether the folder `name` (`<version>_<module>_<what>`) is one of these
    /// modules'.
    pub fn owns(&self, name: &str) -> bool {
        owner_part(name).is_some_and(|rest| {
            self.modules
                .iter()
                .any(|m| rest.strip_prefix(m).is_some_and(|r| r.starts_with('_')))
        })
    }
}

/// What follows a folder name's version (`customers_deals`).
fn owner_part(name: &str) -> Option<&str> {
    name.split_once('_').map(|(_, rest)| rest)
}

/// stoa-core's own migrations (functions, the action log, the outbox, read
/// versions, row-level security). The action log's later folders name the
/// log itself (`action_logs_*`, `audit_log_*`): they are core's too.
pub fn core() -> Migrations {
    Migrations::module("core")
        .and(Migrations::module("action_logs"))
        .and(Migrations::module("audit_log"))
}

impl MigrationSource<Pg> for Migrations {
    fn migrations(&self) -> diesel::migration::Result<Vec<Box<dyn Migration<Pg>>>> {
        let mut all: Vec<Box<dyn Migration<Pg>>> = MigrationSource::<Pg>::migrations(&MIGRATIONS)?
            .into_iter()
            .filter(|m| self.owns(&m.name().to_string()))
            .collect();
        for own in &self.own {
            all.extend(MigrationSource::<Pg>::migrations(own)?);
        }
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_belongs_to_the_module_its_name_names() {
        let jobs = Migrations::module("jobs").and(core());
        assert!(jobs.owns("2026-11-22-004100_jobs_queue"));
        assert!(jobs.owns("2026-11-22-000000_core_setup"));
        assert!(!jobs.owns("2026-11-22-004000_progress_jobs"));
        // A module's name is a whole part, not a prefix of another's.
        assert!(!Migrations::module("progress").owns("2026-11-22-004000_progressive_jobs"));
        assert!(!Migrations::module("customers").owns("2026-11-28-110000_customers"));
        // The action log's own folders are core's.
        assert!(core().owns("2026-12-01-300000_audit_log_partitions"));
        assert!(core().owns("2026-12-01-100000_action_logs_business_rule_source"));
    }

    #[test]
    fn a_module_source_lists_its_folders_only() {
        let listed = MigrationSource::<Pg>::migrations(&Migrations::module("jobs"))
            .map(|m| m.iter().map(|m| m.name().to_string()).collect::<Vec<_>>())
            .unwrap_or_default();
        assert!(
            listed.iter().any(|n| n.ends_with("_jobs_queue")),
            "{listed:?}"
        );
        assert!(listed.iter().all(|n| n.contains("_jobs_")), "{listed:?}");
    }
}
