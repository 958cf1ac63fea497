//! Every write of the module as an undoable command. Each resource's whole
//! state implements `stoa_core::command::Tracked`; undo and redo go through
//! the shared `StateHandler`, whose `authorize` repeats the forward checks
//! for the caller of the undo.

pub mod deals;
pub mod pipelines;
pub mod stages;

use std::sync::Arc;

use stoa_core::command::{CommandHandler, StateHandler};

use crate::model::{DealState, PipelineState, StageState};

/// The undo/redo handlers of the customers module.
pub fn handlers() -> Vec<Arc<dyn CommandHandler>> {
    vec![
        StateHandler::<DealState>::boxed(deals::CREATE),
        StateHandler::<DealState>::boxed(deals::UPDATE),
        StateHandler::<DealState>::boxed(deals::DELETE),
        StateHandler::<DealState>::boxed(deals::BULK_OWNER),
        StateHandler::<DealState>::boxed(deals::BULK_STAGE),
        StateHandler::<PipelineState>::boxed(pipelines::CREATE),
        StateHandler::<PipelineState>::boxed(pipelines::UPDATE),
        StateHandler::<PipelineState>::boxed(pipelines::DELETE),
        StateHandler::<StageState>::boxed(stages::CREATE),
        StateHandler::<StageState>::boxed(stages::UPDATE),
        StateHandler::<StageState>::boxed(stages::DELETE),
        StateHandler::<StageState>::boxed(stages::REORDER),
    ]
}
