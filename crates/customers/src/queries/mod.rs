//! The module's SQL: single-record reads and writes here, the deal list in
//! [`deal_list`].

pub mod deal_bulk;
pub mod deal_list;
pub mod deals;
pub mod pipelines;
pub mod stages;
