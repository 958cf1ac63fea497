//! `/customers/pipeline-stages` routes.

pub mod list;
pub mod reorder;

write_routes! {
    service: stages,
    collection: "/customers/pipeline-stages",
    item: "/customers/pipeline-stages/{id}",
    create: create_stage(CreateStage) " Creates a pipeline stage.",
    update: update_stage, update_stage_by_body, update_stage_with(UpdateStage)
        " Changes a pipeline stage."
        " The collection form of `PUT /customers/pipeline-stages/{id}`; same rules.",
    delete: delete_stage, delete_stage_by_query, delete_stage_with
        " Deletes a pipeline stage (409 while anything still uses it)."
        " The collection form of `DELETE /customers/pipeline-stages/{id}`; same rules.",
}
