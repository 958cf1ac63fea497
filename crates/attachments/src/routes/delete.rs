//! `DELETE /attachments?id=`: removes an attachment; its objects leave
//! storage after commit ([`crate::cleanup`]).

use actix_web::{HttpResponse, delete, web};
use stoa_acl::AuthContext;
use stoa_core::command::with_operation;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::{AppResult, Query};

use crate::dto::{IdQuery, Ok};
use crate::error::AttachmentsError;
use crate::{MANAGE, service};

use super::parse_id;

#[utoipa::path(
    tag = "Attachments",
    params(IdQuery),
    responses(
        (status = 200, body = Ok),
        (status = 400, body = ErrorBody, description = "Missing or malformed id"),
        (status = 404, body = ErrorBody),
    )
)]
#[delete("/attachments")]
pub async fn delete_attachment(
    ctx: AuthContext,
    db: web::Data<Db>,
    q: Query<IdQuery>,
) -> AppResult<HttpResponse> {
    ctx.require(MANAGE)?;
    let id = parse_id(q.id.as_deref(), AttachmentsError::IdRequired)?;
    let op = service::delete(&db, &ctx, id).await?;
    Ok(with_operation(HttpResponse::Ok(), &op).json(Ok::yes()))
}
