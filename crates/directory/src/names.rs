//! Tenant and organization names as SQL expressions other modules' list
//! queries select in their own statement (one round trip per list instead of
//! a name lookup after it). The directory keeps the SQL of its tables here;
//! callers pass the column holding the id, as SQL (`users.organization_id`).
//! Modules outside the directory get the same text through
//! `stoa_acl::OrganizationDirectory` (see `interfaces.rs`).

use diesel::dsl::sql;
use diesel::expression::SqlLiteral;
use diesel::sql_types::{Nullable, Text};

/// `(SELECT name FROM organizations WHERE id = <column>)`, as SQL text.
pub fn organization_name_sql(id_column: &str) -> String {
    format!("(SELECT stoa_o.name FROM organizations stoa_o WHERE stoa_o.id = {id_column})")
}

/// `(SELECT name FROM tenants WHERE id = <column>)`, as SQL text.
pub fn tenant_name_sql(id_column: &str) -> String {
    format!("(SELECT stoa_t.name FROM tenants stoa_t WHERE stoa_t.id = {id_column})")
}

/// [`organization_name_sql`] as a diesel expression.
pub fn organization_name(id_column: &str) -> SqlLiteral<Nullable<Text>> {
    sql(&organization_name_sql(id_column))
}

/// [`tenant_name_sql`] as a diesel expression.
pub fn tenant_name(id_column: &str) -> SqlLiteral<Nullable<Text>> {
    sql(&tenant_name_sql(id_column))
}
