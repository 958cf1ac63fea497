//! `/customers/pipelines` routes.

pub mod list;

write_routes! {
    service: pipelines,
    collection: "/customers/pipelines",
    item: "/customers/pipelines/{id}",
    create: create_pipeline(CreatePipeline) " Creates a pipeline.",
    update: update_pipeline, update_pipeline_by_body, update_pipeline_with(UpdatePipeline)
        " Changes a pipeline."
        " The collection form of `PUT /customers/pipelines/{id}`; same rules.",
    delete: delete_pipeline, delete_pipeline_by_query, delete_pipeline_with
        " Deletes a pipeline (409 while anything still uses it)."
        " The collection form of `DELETE /customers/pipelines/{id}`; same rules.",
}
