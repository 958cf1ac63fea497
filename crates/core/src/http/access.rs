//! Access declarations: every operation says once whether it is public, needs
//! a signed-in caller, or needs features ([`Operation`]). The declarations feed
//! both the check made before a request reaches its handler and the
//! `x-required-features` extension of the OpenAPI document, through one
//! [`AccessPolicy`] (stoa-acl's `AccessMatrix` is the implementation).
//!
//! The types live here rather than in stoa-acl so that this crate's system
//! endpoints declare their operations like every module does. This crate knows
//! nothing of credentials: it only runs the policy it is given.

use std::sync::Arc;

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpRequest, web};
use futures_util::future::LocalBoxFuture;

use super::read_cache::ReadCacheData;
use crate::error::{AppError, ErrorEnvelope, ErrorShape};

/// An HTTP method an operation is declared for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    /// The key of the operation in an OpenAPI path item (`get`, `post`, ...).
    pub fn as_openapi(self) -> &'static str {
        match self {
            Self::Get => "get",
            Self::Post => "post",
            Self::Put => "put",
            Self::Patch => "patch",
            Self::Delete => "delete",
        }
    }

    /// The declared method a request uses (`None` for HEAD, OPTIONS, ...).
    pub fn of(method: &actix_web::http::Method) -> Option<Self> {
        use actix_web::http::Method as M;
        match *method {
            M::GET => Some(Self::Get),
            M::POST => Some(Self::Post),
            M::PUT => Some(Self::Put),
            M::PATCH => Some(Self::Patch),
            M::DELETE => Some(Self::Delete),
            _ => None,
        }
    }
}

/// Who may call an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Anyone, signed in or not (login, password reset, public lookups, health).
    Public,
    /// Any signed-in caller (a session or an API key).
    Authenticated,
    /// A signed-in caller, authenticated by the handler itself because it reads
    /// the credentials its own way (`POST /auth/logout` accepts only a session
    /// token; `GET /auth/admin/nav` takes the scope from its query, not from
    /// the selection cookie). The check before the handler lets the request
    /// through; the authorization matrix test still asserts the 401s.
    AuthenticatedByHandler,
    /// A signed-in caller holding every listed feature in the selected scope.
    Features(&'static [&'static str]),
}

impl Access {
    /// The features this access requires (empty unless [`Access::Features`]).
    pub fn features(self) -> &'static [&'static str] {
        match self {
            Self::Features(features) => features,
            _ => &[],
        }
    }
}

/// One operation of the API, who may call it and how its input errors look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operation {
    pub method: Method,
    /// The route as the module mounts it, relative to `/api`, with the
    /// template of the OpenAPI document (`/devices/{id}`).
    pub path: &'static str,
    pub access: Access,
    /// The shape its validation failures answer in (the reference's, from
    /// the reference notes' `validation-errors.md`); [`ErrorShape::default`]
    /// unless declared with [`Operation::errors`].
    pub errors: ErrorShape,
    /// The message a body that is not JSON answers with, where the reference
    /// words it apart from its schema errors (`{error:"Invalid JSON"}`);
    /// `None` renders it in [`Self::errors`] like any other input problem.
    pub bad_json: Option<&'static str>,
    /// Keys every error answer carries beside `error` (the bulk routes'
    /// `ok:false, progressJobId:null, message`), the access check's 401 and
    /// 403 included; `None` for most operations.
    pub envelope: Option<ErrorEnvelope>,
}

impl Operation {
    pub const fn new(method: Method, path: &'static str, access: Access) -> Self {
        Self {
            method,
            path,
            access,
            errors: ErrorShape::B(""),
            bad_json: None,
            envelope: None,
        }
    }
    /// Declares the envelope of every error answer (see [`ErrorEnvelope`]).
    pub const fn envelope(mut self, envelope: ErrorEnvelope) -> Self {
        self.envelope = Some(envelope);
        self
    }
    /// Declares the shape of the operation's input errors.
    pub const fn errors(mut self, shape: ErrorShape) -> Self {
        self.errors = shape;
        self
    }
    /// Declares the message of a body that is not JSON (see [`BadJson`]).
    pub const fn bad_json(mut self, message: &'static str) -> Self {
        self.bad_json = Some(message);
        self
    }
    pub const fn get(path: &'static str, access: Access) -> Self {
        Self::new(Method::Get, path, access)
    }
    pub const fn post(path: &'static str, access: Access) -> Self {
        Self::new(Method::Post, path, access)
    }
    pub const fn put(path: &'static str, access: Access) -> Self {
        Self::new(Method::Put, path, access)
    }
    pub const fn patch(path: &'static str, access: Access) -> Self {
        Self::new(Method::Patch, path, access)
    }
    pub const fn delete(path: &'static str, access: Access) -> Self {
        Self::new(Method::Delete, path, access)
    }
}

/// The declared message for a body that is not JSON, put in the request's
/// extensions beside its [`ErrorShape`] for the JSON extractor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadJson(pub &'static str);

/// Enforces declared access and documents it.
pub trait AccessPolicy: Send + Sync + 'static {
    /// Runs before routing: `Err` (401, 403, ...) answers the request instead
    /// of its handler.
    fn check(&self, req: &HttpRequest) -> LocalBoxFuture<'static, Result<(), AppError>>;

    /// Adds the declarations to the operations of the OpenAPI document.
    fn document(&self, doc: &mut utoipa::openapi::OpenApi);
}

/// The policy as app data.
pub type AccessPolicyData = web::Data<dyn AccessPolicy>;

/// Middleware: answers a `GET` from the registered [`ReadCache`] when it
/// still holds the answer (see [`super::read_cache`]), else runs the
/// registered [`AccessPolicy`], if any, before the handler.
pub async fn enforce_access(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    if req.method() == actix_web::http::Method::GET
        && let Some(cache) = req.app_data::<ReadCacheData>().cloned()
        // The check is the session check of a kept answer: across tenants.
        && let Some(body) =
            crate::rls::bypass("kept answer check", cache.serve(req.request())).await
    {
        let res = actix_web::HttpResponse::Ok()
            .content_type("application/json")
            .body(body);
        return Ok(req.into_response(res).map_into_right_body());
    }
    let policy = req.app_data::<AccessPolicyData>().cloned();
    if let Some(policy) = policy
        && let Err(err) = policy.check(req.request()).await
    {
        // The policy put the operation's envelope (if any) in the request.
        let envelope = req.extensions().get::<ErrorEnvelope>().copied();
        let err = match envelope {
            Some(envelope) => err.in_envelope(envelope),
            None => err,
        };
        return Ok(req.error_response(err).map_into_right_body());
    }
    let res = next.call(req).await?;
    Ok(in_declared_shape(res).map_into_left_body())
}

/// Renders an input error in the shape its route declared, and any error in
/// its declared envelope (both put in the request by the [`AccessPolicy`]),
/// keeping the headers already set.
fn in_declared_shape<B: MessageBody + 'static>(
    res: ServiceResponse<B>,
) -> ServiceResponse<actix_web::body::BoxBody> {
    let (shape, envelope) = {
        let extensions = res.request().extensions();
        (
            extensions.get::<ErrorShape>().copied(),
            extensions.get::<ErrorEnvelope>().copied(),
        )
    };
    let rendered = res
        .response()
        .error()
        .and_then(|e| e.as_error::<AppError>())
        .filter(|err| match err.issues() {
            Some(_) => shape.is_some() || envelope.is_some(),
            // Rendered again only for the envelope; a server error keeps
            // its body (and is logged once, when first rendered).
            None => envelope.is_some() && !err.status().is_server_error(),
        })
        .map(|err| err.response_with(shape.unwrap_or_default(), envelope));
    let Some(mut rendered) = rendered else {
        return res.map_into_boxed_body();
    };
    for (name, value) in res.headers() {
        if name != actix_web::http::header::CONTENT_TYPE
            && name != actix_web::http::header::CONTENT_LENGTH
            && !rendered.headers().contains_key(name)
        {
            rendered.headers_mut().append(name.clone(), value.clone());
        }
    }
    res.into_response(rendered)
}

/// Wraps a policy as app data.
pub fn access_policy_data(policy: Arc<dyn AccessPolicy>) -> AccessPolicyData {
    web::Data::from(policy)
}
