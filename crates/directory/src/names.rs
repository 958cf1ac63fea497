//! Tenant and organization names as SQL expressions other modules' list
//! queries select in their own statement (one round trip per list instead of
//! a name lookup after it). The directory keeps the SQL of its tables here;
//! callers pass the column holding the id, as SQL (`users.organization_id`).

use diesel::dsl::sql;
use diesel::expression::SqlLiteral;
use diesel::sql_types::{Nullable, Text};

/// `(SELECT name FROM organizations WHERE id = <column>)`.
pub fn organization_name(id_column: &str) -> SqlLiteral<Nullable<Text>> {
    sql(&format!(
        "(SELECT stoa_o.name FROM organizations stoa_o WHERE stoa_o.id = {id_column})"
    ))
}

/// `(SELECT name FROM tenants WHERE id = <column>)`.
pub fn tenant_name(id_column: &str) -> SqlLiteral<Nullable<Text>> {
    sql(&format!(
        "(SELECT stoa_t.name FROM tenants stoa_t WHERE stoa_t.id = {id_column})"
    ))
}
