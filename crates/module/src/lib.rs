//! The module descriptor: the one value a module crate hands the server.
//!
//! Each domain crate exposes `module(..) -> Module`: its name and
//! operations, and whichever of the other parts it has — what it registers,
//! its undo/redo handlers, its routes, job handlers, recurring jobs and
//! event subscribers. The value is built from the module context
//! (`stoa_acl::Services`) and its parts keep the module services they need
//! (a user directory, the organization directory ...), so no module keeps a
//! process-wide slot for them. The server keeps one list of these values
//! and derives everything from it: the registry ([`registry_of`]), the
//! undo/redo handlers ([`commands_of`]), the routes ([`configurators_of`]),
//! the job handlers, the recurring jobs and the event subscribers.
//!
//! It is its own crate because it names the pieces of three layers: the
//! registry and the module context (stoa-acl), the command bus and routes
//! (stoa-core) and the job queue (stoa-jobs); none of those may name the
//! others' upper neighbours.
#![doc = include_str!("../README.md")]

use std::sync::Arc;

use stoa_acl::{Registry, RegistryError, Services};
use stoa_core::command::outbox::Subscriber;
use stoa_core::command::{CommandHandler, CommandRegistry};
use stoa_core::config::ConfigError;
use stoa_core::http::{ApiConfigurator, Operation};
use stoa_jobs::{JobHandler, Schedule};

type Registers = Box<dyn Fn(&mut Registry) -> Result<(), RegistryError> + Send + Sync>;
type Routes =
    Box<dyn Fn(&Services, &Arc<CommandRegistry>) -> Result<ApiConfigurator, String> + Send + Sync>;
type Jobs = Box<dyn Fn(&Services) -> Vec<Arc<dyn JobHandler>> + Send + Sync>;
type Schedules = Box<dyn Fn() -> Result<Vec<Schedule>, ConfigError> + Send + Sync>;
type Subscribers = Box<dyn Fn(&Services) -> Vec<Arc<dyn Subscriber>> + Send + Sync>;

/// What one module crate contributes. Every part but the name and the
/// operations is optional: a module says only what it has.
pub struct Module {
    name: &'static str,
    operations: &'static [Operation],
    registers: Option<Registers>,
    handlers: Vec<Arc<dyn CommandHandler>>,
    routes: Option<Routes>,
    jobs: Option<Jobs>,
    schedules: Option<Schedules>,
    subscribers: Option<Subscribers>,
}

impl Module {
    /// The module `name` (its features' prefix, e.g. `customers`) and who
    /// may call each of its operations (the access matrix).
    pub fn new(name: &'static str, operations: &'static [Operation]) -> Self {
        Self {
            name,
            operations,
            registers: None,
            handlers: Vec::new(),
            routes: None,
            jobs: None,
            schedules: None,
            subscribers: None,
        }
    }

    /// Features, default grants, navigation and registry slots (widgets,
    /// AI tools, rule entities and writers, record targets, seeders, demo
    /// data, write guards).
    pub fn registers(
        mut self,
        register: impl Fn(&mut Registry) -> Result<(), RegistryError> + Send + Sync + 'static,
    ) -> Self {
        self.registers = Some(Box::new(register));
        self
    }

    /// The undo/redo handlers of the module's commands.
    pub fn handlers(mut self, handlers: Vec<Arc<dyn CommandHandler>>) -> Self {
        self.handlers = handlers;
        self
    }

    /// The module's routes (under `/api`), built from the module context
    /// when the server mounts them. The second argument is every module's
    /// undo/redo registry (the audit log's undo and redo routes dispatch
    /// through it). A malformed setting the module reads from the
    /// environment stops start-up with its message.
    pub fn routes(
        mut self,
        routes: impl Fn(&Services, &Arc<CommandRegistry>) -> Result<ApiConfigurator, String>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.routes = Some(Box::new(routes));
        self
    }

    /// The module's job handlers.
    pub fn jobs(
        mut self,
        jobs: impl Fn(&Services) -> Vec<Arc<dyn JobHandler>> + Send + Sync + 'static,
    ) -> Self {
        self.jobs = Some(Box::new(jobs));
        self
    }

    /// The module's recurring jobs (each runs once per period across all
    /// processes); a malformed setting stops start-up.
    pub fn schedules(
        mut self,
        schedules: impl Fn() -> Result<Vec<Schedule>, ConfigError> + Send + Sync + 'static,
    ) -> Self {
        self.schedules = Some(Box::new(schedules));
        self
    }

    /// The module's in-process event subscribers (run after commit).
    pub fn subscribers(
        mut self,
        subscribers: impl Fn(&Services) -> Vec<Arc<dyn Subscriber>> + Send + Sync + 'static,
    ) -> Self {
        self.subscribers = Some(Box::new(subscribers));
        self
    }

    /// The module's name.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

/// The modules one process mounts, in mount order.
pub type Modules = Vec<Module>;

/// Registers every module's features and operations on top of `base` and
/// checks the slots that may name other modules' features (widgets,
/// analytics sources, AI tools, rule entities) once all have registered.
pub fn registry_of(mut base: Registry, modules: &[Module]) -> Result<Registry, RegistryError> {
    for register in modules.iter().filter_map(|m| m.registers.as_ref()) {
        register(&mut base)?;
    }
    for module in modules {
        base.register_operations(module.operations)?;
    }
    base.check_slots()?;
    Ok(base)
}

/// Every module's undo/redo handlers.
pub fn commands_of(modules: &[Module]) -> CommandRegistry {
    modules
        .iter()
        .flat_map(|m| m.handlers.iter().cloned())
        .fold(CommandRegistry::new(), CommandRegistry::handler)
}

/// Every module's routes, in mount order.
pub fn configurators_of(
    modules: &[Module],
    services: &Services,
    commands: &Arc<CommandRegistry>,
) -> Result<Vec<ApiConfigurator>, String> {
    modules
        .iter()
        .filter_map(|m| m.routes.as_ref())
        .map(|routes| routes(services, commands))
        .collect()
}

/// Every module's job handlers.
pub fn job_handlers_of(modules: &[Module], services: &Services) -> Vec<Arc<dyn JobHandler>> {
    modules
        .iter()
        .filter_map(|m| m.jobs.as_ref())
        .flat_map(|jobs| jobs(services))
        .collect()
}

/// Every module's recurring jobs.
pub fn schedules_of(modules: &[Module]) -> Result<Vec<Schedule>, ConfigError> {
    let mut all = Vec::new();
    for schedules in modules.iter().filter_map(|m| m.schedules.as_ref()) {
        all.extend(schedules()?);
    }
    Ok(all)
}

/// Every module's event subscribers.
pub fn subscribers_of(modules: &[Module], services: &Services) -> Vec<Arc<dyn Subscriber>> {
    modules
        .iter()
        .filter_map(|m| m.subscribers.as_ref())
        .flat_map(|subscribers| subscribers(services))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FEATURES: &[stoa_acl::Feature] = &[stoa_acl::Feature {
        id: "widgets.view",
        title: "View widgets",
        module: "widgets",
    }];

    fn widgets() -> Module {
        Module::new("widgets", &[]).registers(|registry| {
            registry.register(
                stoa_acl::ModuleInfo {
                    id: "widgets",
                    title: "Widgets",
                },
                FEATURES,
            )
        })
    }

    #[test]
    fn the_registry_holds_what_each_module_registers() {
        let registry = registry_of(Registry::new(), &[widgets(), Module::new("empty", &[])])
            .expect("registers");
        assert!(registry.features().any(|f| f.id == "widgets.view"));
    }

    #[test]
    fn a_module_registered_twice_is_refused() {
        assert!(registry_of(Registry::new(), &[widgets(), widgets()]).is_err());
    }

    #[test]
    fn parts_a_module_does_not_have_contribute_nothing() {
        let modules = [Module::new("empty", &[])];
        assert!(commands_of(&modules).get("widgets.save").is_none());
        assert!(schedules_of(&modules).expect("no settings").is_empty());
    }
}
