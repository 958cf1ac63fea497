//! Building a worker pool: its handlers, job records, creators and
//! schedules.

use super::*;

impl Workers {
    pub fn new(db: Db, handlers: Vec<Arc<dyn JobHandler>>, config: WorkerConfig) -> Self {
        Self {
            db,
            handlers: handlers.into_iter().map(|h| (h.kind(), h)).collect(),
            schedules: Vec::new(),
            config,
            name: format!("{}-{}", std::process::id(), Uuid::new_v4().simple()),
            creators: None,
            guards: WriteGuards::default(),
            records: Arc::new(NoRecords),
        }
    }

    /// Keeps the records of jobs enqueued with one (stoa's:
    /// `stoa_progress::records()`); without it the workers run jobs and
    /// update no record ([`NoRecords`]).
    pub fn with_records(mut self, records: Arc<dyn JobRecords>) -> Self {
        self.records = records;
        self
    }

    /// Gives handlers the module context's creator resolver and the
    /// registry's write guards ([`JobContext::creator`]).
    pub fn with_services(self, services: &Services) -> Self {
        self.with_creators(
            services.creators.clone(),
            services.registry.write_guards().clone(),
        )
    }

    /// [`Workers::with_services`] for a program without stoa's module
    /// context: its own creator resolver and write guards (an embedder's).
    pub fn with_creators(
        mut self,
        creators: Arc<dyn CreatorResolver>,
        guards: WriteGuards,
    ) -> Self {
        self.creators = Some(creators);
        self.guards = guards;
        self
    }

    /// Recurring jobs this process registers and enqueues when due.
    pub fn with_schedules(mut self, schedules: Vec<Schedule>) -> Self {
        self.schedules = schedules;
        self
    }

    pub fn config(&self) -> &WorkerConfig {
        &self.config
    }
}
