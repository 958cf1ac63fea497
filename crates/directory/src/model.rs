//! Database rows of tenants and organizations. The API's shapes are in
//! `dto/`.

use diesel::prelude::*;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::{organizations, tenants};

#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = tenants)]
pub struct TenantRow {
    pub id: Uuid,
    pub name: String,
    pub is_active: bool,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = organizations)]
pub struct OrganizationRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub name: String,
    pub slug: Option<String>,
    pub logo_url: Option<String>,
    pub logo_preserve_aspect_ratio: bool,
    pub is_active: bool,
    pub parent_id: Option<Uuid>,
    pub root_id: Uuid,
    pub depth: i32,
    pub ancestor_ids: Vec<Uuid>,
    pub updated_at: OffsetDateTime,
}

impl OrganizationRow {
    /// Ancestor ids and the id itself joined by `/`, as the reference's `treePath`.
    pub fn tree_path(&self) -> String {
        let mut parts: Vec<String> = self.ancestor_ids.iter().map(Uuid::to_string).collect();
        parts.push(self.id.to_string());
        parts.join("/")
    }
}
