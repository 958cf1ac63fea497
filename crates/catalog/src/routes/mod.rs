//! One handler per file: extract, call the service, answer. The
//! collection-style forms (`PUT /catalog/products {id}`, `DELETE
//! /catalog/products?id=`) share the service calls of the `/{id}` forms.

pub mod bulk_delete;
pub mod create;
pub mod delete;
pub mod delete_by_query;
pub mod get;
pub mod list;
pub mod update;
pub mod update_by_body;
