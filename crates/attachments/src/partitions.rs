//! Partition rules: who sees which, the environment's lock, creation with a
//! globally unique code, updates that never change the code, deletion of
//! unused non-default partitions.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use stoa_acl::Kept;
use stoa_acl::{AuthContext, Reach};
use stoa_core::AppError;
use stoa_core::command::Operation;
use stoa_core::db::Db;
use stoa_core::http::read_cache::{ReadDeps, versions};
use uuid::Uuid;

use crate::commands::{
    CreatePartition, DeletePartition, PartitionInput, PartitionScope, UpdatePartition,
};
use crate::config::AttachmentsConfig;
use crate::dto::PartitionBody;
use crate::error::AttachmentsError;
use crate::model::Partition;
use crate::schema::attachment_partitions as p;

/// 403 while the environment manages partitions (demo or self-service onboarding).
pub fn check_unlocked(config: &AttachmentsConfig) -> Result<(), AttachmentsError> {
    if config.partitions_locked {
        Err(AttachmentsError::PartitionsLocked)
    } else {
        Ok(())
    }
}

/// The global partitions and the caller's tenant's that its organization
/// scope does not hide (`AuthContext::reach`: a restricted caller sees its
/// organizations' and the tenant-wide ones), every one for a super admin;
/// oldest first.
pub async fn visible(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
) -> Result<Kept<Vec<Partition>>, AppError> {
    let tenant = if ctx.is_super_admin() {
        None
    } else {
        Some(ctx.tenant()?)
    };
    // The library's read model: its triggers on `attachment_partitions`
    // bump it (and uploads too, which only makes a kept list recomputed
    // more often than it must be).
    let deps = ReadDeps::new(crate::library_list::READ_DEPS, tenant);
    let mut query = p::table
        .select((Partition::as_select(), versions(deps)))
        .into_boxed();
    if let Some(tenant) = tenant {
        query = query.filter(p::tenant_id.is_null().or(p::tenant_id.eq(tenant)));
    }
    let rows: Vec<(Partition, Vec<i64>)> = query
        .order((p::created_at.asc(), p::code.asc()))
        .load(conn)
        .await?;
    Ok(Kept::of_rows(rows, deps).map(|rows| {
        rows.into_iter()
            .filter(|row| ctx.reach(row.tenant_id, row.organization_id) != Reach::Hidden)
            .collect()
    }))
}

/// A partition by code, when the caller may use it: global, or its tenant's
/// and not hidden by its organization scope.
pub async fn usable(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    tenant: Uuid,
    code: &str,
) -> Result<Option<Partition>, AppError> {
    let found: Option<Partition> = p::table
        .filter(p::code.eq(code))
        .filter(p::tenant_id.is_null().or(p::tenant_id.eq(tenant)))
        .select(Partition::as_select())
        .first(conn)
        .await
        .optional()?;
    Ok(found.filter(|row| ctx.reach(row.tenant_id, row.organization_id) != Reach::Hidden))
}

fn input(body: PartitionBody, config: &AttachmentsConfig) -> PartitionInput {
    let blank_to_none =
        |v: Option<String>| v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    PartitionInput {
        code: body.code.trim().to_string(),
        title: body.title.trim().to_string(),
        description: blank_to_none(body.description),
        is_public: body.is_public.unwrap_or(false),
        requires_ocr: body.requires_ocr.unwrap_or(config.default_requires_ocr),
        ocr_model: blank_to_none(body.ocr_model),
        storage_driver: body.storage_driver.unwrap_or_else(|| "local".into()),
        config_json: body.config_json.filter(|v| !v.is_null()),
    }
}

/// `configJson` must be an object (or null).
fn check_config_json(body: &PartitionBody) -> Result<(), AttachmentsError> {
    match &body.config_json {
        None | Some(Value::Null) | Some(Value::Object(_)) => Ok(()),
        Some(_) => Err(AttachmentsError::InvalidField(
            "configJson: must be an object",
        )),
    }
}

fn scope(ctx: &AuthContext) -> Result<PartitionScope, AppError> {
    Ok(PartitionScope {
        tenant_id: ctx.tenant()?,
        caller: ctx.clone(),
    })
}

pub async fn create(
    db: &Db,
    ctx: &AuthContext,
    config: &AttachmentsConfig,
    body: PartitionBody,
) -> Result<(Partition, Operation), AppError> {
    check_config_json(&body)?;
    if body.title.trim().is_empty() {
        return Err(AttachmentsError::InvalidField("title: must not be blank").into());
    }
    // A caller restricted to some organizations creates partitions in one
    // of them, never tenant-wide ones it could not change afterwards.
    let organization_id = ctx.organization_id();
    ctx.require_organizations([organization_id])?;
    let command = CreatePartition {
        input: input(body, config),
        tenant_id: ctx.tenant()?,
        organization_id,
    };
    crate::service::run(db, ctx, command).await
}

pub async fn update(
    db: &Db,
    ctx: &AuthContext,
    config: &AttachmentsConfig,
    body: PartitionBody,
    raw: &Value,
) -> Result<(Partition, Operation), AppError> {
    check_config_json(&body)?;
    let id = body.id.ok_or(AttachmentsError::PartitionIdRequired)?;
    if body.title.trim().is_empty() {
        return Err(AttachmentsError::InvalidField("title: must not be blank").into());
    }
    let has = |key: &str| raw.get(key).is_some();
    let command = UpdatePartition {
        id,
        has_requires_ocr: has("requiresOcr"),
        has_ocr_model: has("ocrModel"),
        has_config_json: has("configJson"),
        has_storage_driver: has("storageDriver"),
        input: input(body, config),
        scope: scope(ctx)?,
    };
    crate::service::run(db, ctx, command).await
}

pub async fn delete(db: &Db, ctx: &AuthContext, id: Uuid) -> Result<Operation, AppError> {
    let command = DeletePartition {
        id,
        scope: scope(ctx)?,
    };
    crate::service::run(db, ctx, command)
        .await
        .map(|((), op)| op)
}
