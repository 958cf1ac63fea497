//! The write routes pipelines and stages share: create, update (by path and by
//! body) and delete (by path and by query). Their handlers differ only in the
//! resource's service, body types, paths and words, so one macro writes both
//! sets; the modules and handler names stay as they were, so the operation ids
//! and the OpenAPI document do not change.

/// Writes the modules `create`, `update`, `update_by_body`, `delete` and
/// `delete_by_query` for one resource. Paths and docs are `tt` so that the
/// route and `utoipa::path` attributes see plain string literals.
macro_rules! write_routes {
    (
        service: $service:ident,
        collection: $collection:tt,
        item: $item:tt,
        create: $create:ident($create_body:ident) $create_doc:tt,
        update: $update:ident, $update_by_body:ident, $update_with:ident($update_body:ident)
            $update_doc:tt $update_by_body_doc:tt,
        delete: $delete:ident, $delete_by_query:ident, $delete_with:ident
            $delete_doc:tt $delete_by_query_doc:tt $(,)?
    ) => {
        /// The create route.
        pub mod create {
            use actix_web::{HttpResponse, post, web};
            use stoa_acl::AuthContext;
            use stoa_core::command::with_operation;
            use stoa_core::db::Db;
            use stoa_core::error::ErrorBody;
            use stoa_core::{AppResult, Json};

            use $crate::PIPELINES_MANAGE;
            use $crate::dto::{$create_body, Created};
            use $crate::service::$service;

            #[doc = $create_doc]
            #[utoipa::path(
                tag = "Customers",
                request_body = $create_body,
                responses(
                    (status = 201, body = Created, description = "Created; `x-om-operation` carries the undo token"),
                    (status = 404, body = ErrorBody, description = "The pipeline (of a stage) does not exist for the caller"),
                    (status = 422, body = ErrorBody, description = "Refused by a write guard"),
                )
            )]
            #[post($collection)]
            pub async fn $create(
                ctx: AuthContext,
                db: web::Data<Db>,
                body: Json<$create_body>,
            ) -> AppResult<HttpResponse> {
                ctx.require(PIPELINES_MANAGE)?;
                let (id, op) = $service::create(&db, &ctx, body.into_inner()).await?;
                Ok(with_operation(HttpResponse::Created(), &op).json(Created { id }))
            }
        }

        /// The update route by path.
        pub mod update {
            use actix_web::{HttpResponse, put, web};
            use stoa_acl::AuthContext;
            use stoa_core::command::with_operation;
            use stoa_core::db::Db;
            use stoa_core::error::ErrorBody;
            use stoa_core::{AppResult, Json, Path};
            use uuid::Uuid;

            use $crate::PIPELINES_MANAGE;
            use $crate::dto::{$update_body, Done};
            use $crate::service::$service;

            /// The body shared by both update forms.
            pub async fn $update_with(
                ctx: &AuthContext,
                db: &Db,
                id: Uuid,
                body: $update_body,
            ) -> AppResult<HttpResponse> {
                ctx.require(PIPELINES_MANAGE)?;
                let op = $service::update(db, ctx, id, body).await?;
                Ok(with_operation(HttpResponse::Ok(), &op).json(Done { ok: true }))
            }

            #[doc = $update_doc]
            #[utoipa::path(
                tag = "Customers",
                params(("id" = Uuid, Path)),
                request_body = $update_body,
                responses(
                    (status = 200, body = Done, description = "Updated; `x-om-operation` carries the undo token"),
                    (status = 404, body = ErrorBody),
                    (status = 422, body = ErrorBody),
                )
            )]
            #[put($item)]
            pub async fn $update(
                ctx: AuthContext,
                db: web::Data<Db>,
                id: Path<Uuid>,
                body: Json<$update_body>,
            ) -> AppResult<HttpResponse> {
                $update_with(&ctx, &db, id.into_inner(), body.into_inner()).await
            }
        }

        /// The update route's collection form.
        pub mod update_by_body {
            use actix_web::{HttpResponse, put, web};
            use stoa_acl::AuthContext;
            use stoa_core::collection::WithId;
            use stoa_core::db::Db;
            use stoa_core::error::ErrorBody;
            use stoa_core::{AppResult, Json};

            use super::update::$update_with;
            use $crate::dto::{$update_body, Done};

            #[doc = $update_by_body_doc]
            #[utoipa::path(
                tag = "Customers",
                params(("id" = Option<String>, Query, description = "Id, when not in the body")),
                request_body = $update_body,
                responses(
                    (status = 200, body = Done),
                    (status = 404, body = ErrorBody),
                    (status = 422, body = ErrorBody),
                )
            )]
            #[put($collection)]
            pub async fn $update_by_body(
                ctx: AuthContext,
                db: web::Data<Db>,
                body: WithId<Json<$update_body>>,
            ) -> AppResult<HttpResponse> {
                let id = body.id.uuid()?;
                $update_with(&ctx, &db, id, body.body.into_inner()).await
            }
        }

        /// The delete route by path.
        pub mod delete {
            use actix_web::{HttpResponse, delete, web};
            use stoa_acl::AuthContext;
            use stoa_core::command::with_operation;
            use stoa_core::db::Db;
            use stoa_core::error::ErrorBody;
            use stoa_core::{AppResult, Path};
            use uuid::Uuid;

            use $crate::PIPELINES_MANAGE;
            use $crate::dto::Done;
            use $crate::service::$service;

            /// The body shared by both delete forms.
            pub async fn $delete_with(ctx: &AuthContext, db: &Db, id: Uuid) -> AppResult<HttpResponse> {
                ctx.require(PIPELINES_MANAGE)?;
                let op = $service::delete(db, ctx, id).await?;
                Ok(with_operation(HttpResponse::Ok(), &op).json(Done { ok: true }))
            }

            #[doc = $delete_doc]
            #[utoipa::path(
                tag = "Customers",
                params(("id" = Uuid, Path)),
                responses(
                    (status = 200, body = Done, description = "Deleted; `x-om-operation` carries the undo token"),
                    (status = 404, body = ErrorBody),
                    (status = 409, body = ErrorBody, description = "Still in use"),
                )
            )]
            #[delete($item)]
            pub async fn $delete(
                ctx: AuthContext,
                db: web::Data<Db>,
                id: Path<Uuid>,
            ) -> AppResult<HttpResponse> {
                $delete_with(&ctx, &db, id.into_inner()).await
            }
        }

        /// The delete route's collection form.
        pub mod delete_by_query {
            use actix_web::{HttpResponse, delete, web};
            use stoa_acl::AuthContext;
            use stoa_core::AppResult;
            use stoa_core::collection::CollectionId;
            use stoa_core::db::Db;
            use stoa_core::error::ErrorBody;

            use super::delete::$delete_with;
            use $crate::dto::Done;

            #[doc = $delete_by_query_doc]
            #[utoipa::path(
                tag = "Customers",
                params(("id" = Option<String>, Query, description = "Id; may come in a JSON body `{id}` instead")),
                request_body(content = Option<stoa_core::collection::IdBody>, description = "The id, when not in the query"),
                responses(
                    (status = 200, body = Done),
                    (status = 404, body = ErrorBody),
                    (status = 409, body = ErrorBody),
                )
            )]
            #[delete($collection)]
            pub async fn $delete_by_query(
                ctx: AuthContext,
                db: web::Data<Db>,
                id: CollectionId,
            ) -> AppResult<HttpResponse> {
                let id = id.uuid()?;
                $delete_with(&ctx, &db, id).await
            }
        }
    };
}
