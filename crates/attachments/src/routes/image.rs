//! `GET /attachments/image/{id}[/{slug}]`: an image, resized on request; the
//! slug is for readable URLs and is ignored.

use actix_web::{HttpRequest, get, web};
use stoa_acl::OptionalAuth;
use stoa_core::db::Db;
use stoa_core::error::ErrorBody;
use stoa_core::http::{Download, TrustedProxyDepth, client_ip};
use stoa_core::storage::Storage;
use stoa_core::{AppResult, Path, Query};

use crate::config::AttachmentsConfig;
use crate::dto::ImageQuery;
use crate::error::AttachmentsError;
use crate::images::{Renderer, Size, VariantRequest};
use crate::sniff::RESIZABLE_TYPES;
use crate::{access, store};

/// What both image routes are handed.
struct Deps {
    auth: OptionalAuth,
    db: web::Data<Db>,
    storage: web::Data<Storage>,
    renderer: web::Data<Renderer>,
    config: web::Data<AttachmentsConfig>,
}

async fn serve(req: &HttpRequest, deps: Deps, id: &str, q: ImageQuery) -> AppResult<Download> {
    let Deps {
        auth,
        db,
        storage,
        renderer,
        config,
    } = deps;
    // Parameters first: a bad one is 400 before anything is looked up.
    let size = Size::parse(
        q.width.as_deref(),
        q.height.as_deref(),
        q.crop_type.as_deref(),
    )?;
    size.check_allowed(config.image_sizes.as_deref())?;
    let id = super::parse_id(Some(id), AttachmentsError::IdRequired)?;
    if auth.as_ref().is_none() {
        // An anonymous read of a file in a public partition: the file's
        // tenant is not known before the lookup (audited bypass, stoa_core::rls).
        stoa_core::rls::set_request_scope(stoa_core::rls::bypass_scope("public attachment"));
    }
    let mut conn = db.conn().await?;
    let file = access::readable(&mut conn, id, auth.as_ref()).await?;
    drop(conn);
    let row = file.row;
    if !RESIZABLE_TYPES.contains(&row.mime_type.as_str()) {
        return Err(AttachmentsError::UnsupportedMedia.into());
    }
    let variant = size.variant_name();
    let client = client_ip(req, TrustedProxyDepth(config.trust_proxy_depth));
    let (bytes, content_type) = renderer
        .variant(
            &storage,
            VariantRequest {
                original: &store::original(row.tenant_id, row.id),
                variants: &store::variants(row.tenant_id, row.id),
                variant: &store::variant(row.tenant_id, row.id, &variant),
                size,
                client: client.as_deref(),
            },
        )
        .await?;
    // A variant of an attachment never changes (its file cannot be replaced).
    Ok(Download::bytes(row.file_name.clone(), content_type, bytes)
        .inline()
        .etag(&format!("{}-{variant}", row.checksum))
        .cache_control(if file.partition.is_public {
            "public, max-age=31536000, immutable"
        } else {
            "private, max-age=31536000, immutable"
        })
        .sandboxed())
}

/// The image with a slug (ignored) in its path.
#[utoipa::path(
    tag = "Attachments",
    params(
        ("id" = String, Path, description = "Attachment id"),
        ("slug" = String, Path, description = "A readable name (ignored)"),
        ImageQuery
    ),
    security((), ("bearerAuth" = []), ("apiKey" = [])),
    responses(
        (status = 200, description = "The image", content_type = "image/png", body = Vec<u8>),
        (status = 304, description = "Not modified (If-None-Match)"),
        (status = 400, body = ErrorBody, description = "Invalid size parameters (or a size outside OM_ATTACHMENT_IMAGE_SIZES), malformed id, not an image, over the pixel limit"),
        (status = 401, body = ErrorBody, description = "An image of a private partition without a valid token or API key"),
        (status = 404, body = ErrorBody),
        (status = 429, body = ErrorBody, description = "Too many renders of variants not stored yet from this address (Retry-After)"),
        (status = 500, body = ErrorBody, description = "Partition misconfigured or rendering failed"),
    )
)]
#[get("/attachments/image/{id}/{slug}")]
#[expect(
    clippy::too_many_arguments,
    reason = "actix hands a handler its extractors as arguments"
)]
pub async fn serve_image_with_slug(
    req: HttpRequest,
    auth: OptionalAuth,
    db: web::Data<Db>,
    storage: web::Data<Storage>,
    renderer: web::Data<Renderer>,
    config: web::Data<AttachmentsConfig>,
    path: Path<(String, String)>,
    q: Query<ImageQuery>,
) -> AppResult<Download> {
    let (id, _slug) = path.into_inner();
    let deps = Deps {
        auth,
        db,
        storage,
        renderer,
        config,
    };
    serve(&req, deps, &id, q.into_inner()).await
}

/// The image without a slug.
#[utoipa::path(
    tag = "Attachments",
    params(("id" = String, Path, description = "Attachment id"), ImageQuery),
    security((), ("bearerAuth" = []), ("apiKey" = [])),
    responses(
        (status = 200, description = "The image", content_type = "image/png", body = Vec<u8>),
        (status = 304, description = "Not modified (If-None-Match)"),
        (status = 400, body = ErrorBody, description = "Invalid size parameters (or a size outside OM_ATTACHMENT_IMAGE_SIZES), malformed id, not an image, over the pixel limit"),
        (status = 401, body = ErrorBody, description = "An image of a private partition without a valid token or API key"),
        (status = 404, body = ErrorBody),
        (status = 429, body = ErrorBody, description = "Too many renders of variants not stored yet from this address (Retry-After)"),
        (status = 500, body = ErrorBody, description = "Partition misconfigured or rendering failed"),
    )
)]
#[get("/attachments/image/{id}")]
#[expect(
    clippy::too_many_arguments,
    reason = "actix hands a handler its extractors as arguments"
)]
pub async fn serve_image(
    req: HttpRequest,
    auth: OptionalAuth,
    db: web::Data<Db>,
    storage: web::Data<Storage>,
    renderer: web::Data<Renderer>,
    config: web::Data<AttachmentsConfig>,
    id: Path<String>,
    q: Query<ImageQuery>,
) -> AppResult<Download> {
    let deps = Deps {
        auth,
        db,
        storage,
        renderer,
        config,
    };
    serve(&req, deps, &id.into_inner(), q.into_inner()).await
}
