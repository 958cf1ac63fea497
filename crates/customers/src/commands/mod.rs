//! Every write of the module as an undoable command. Each resource's whole
//! state implements `stoa_core::command::Tracked`; undo and redo go through
//! the shared `StateHandler`, whose `authorize` repeats the forward checks
//! for the caller of the undo (a deal's with the module's user directory,
//! `stoa_acl::resource::handler`).

pub mod deals;
pub mod pipelines;
pub mod stages;

use std::sync::Arc;

use stoa_acl::UserDirectory;
use stoa_acl::resource::handler;
use stoa_core::command::{CommandHandler, StateHandler};

use crate::model::{DealState, PipelineState, StageState};

/// The undo/redo handlers of the customers module; a deal's check owners
/// in `users`.
pub fn handlers(users: Arc<dyn UserDirectory>) -> Vec<Arc<dyn CommandHandler>> {
    let deal = |id| handler::<DealState>(id, users.clone());
    vec![
        deal(deals::CREATE),
        deal(deals::UPDATE),
        deal(deals::DELETE),
        deal(deals::BULK_OWNER),
        deal(deals::BULK_STAGE),
        StateHandler::<PipelineState>::boxed(pipelines::CREATE),
        StateHandler::<PipelineState>::boxed(pipelines::UPDATE),
        StateHandler::<PipelineState>::boxed(pipelines::DELETE),
        StateHandler::<StageState>::boxed(stages::CREATE),
        StateHandler::<StageState>::boxed(stages::UPDATE),
        StateHandler::<StageState>::boxed(stages::DELETE),
        StateHandler::<StageState>::boxed(stages::REORDER),
    ]
}
