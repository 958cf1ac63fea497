//! `GET /business_rules/platform-call-options`: the operations a
//! `CALL_OPEN_MERCATO` action could name, from the server's declared
//! operations (the authorization matrix, which the server's test holds equal
//! to the mounted routes and the OpenAPI document), with their required
//! features, and each one's `summary` and `operationId` from the server's
//! own OpenAPI document (utoipa's, built from the mounted handlers).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use stoa_acl::KeyDirectory;
use stoa_acl::accounts::CreatorResolver;
use stoa_acl::{AuthContext, Registry};
use stoa_core::AppError;
use stoa_core::db::Db;
use stoa_core::http::Access;
use stoa_core::system::OpenApiJson;
use uuid::Uuid;

use crate::dto::{CallApiKey, CallEndpoint, CallKeyRole, CallOptions};

const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE"];
const SELF_PATH: &str = "/business_rules/platform-call-options";

/// The live API keys of `tenant` a rule of the caller may run as: those
/// whose grants, as the key would act in the caller's organization now,
/// reach no further than the caller's (`AuthContext::require_within`, the
/// rule a save applies too), ordered by name. The keys come from their
/// owner's interface (`KeyDirectory`), never from its table.
pub async fn api_keys(
    db: &Db,
    keys: &dyn KeyDirectory,
    creators: &dyn CreatorResolver,
    ctx: &AuthContext,
    tenant: Uuid,
) -> Result<Vec<CallApiKey>, AppError> {
    let mut conn = db.conn().await?;
    let live = keys.live_keys(&mut conn, tenant).await?;
    let mut within = Vec::with_capacity(live.len());
    for key in live {
        let visible = key
            .organization_id
            .is_none_or(|o| ctx.can_see_organization(o));
        if !visible {
            continue;
        }
        let principal = super::checks::key_principal(
            &mut conn,
            creators,
            tenant,
            ctx.organization_id(),
            key.id,
        )
        .await?;
        if principal.is_some_and(|principal| principal.is_within(ctx)) {
            within.push(key);
        }
    }
    Ok(within
        .into_iter()
        .map(|k| CallApiKey {
            id: k.id,
            name: k.name,
            key_prefix: k.key_prefix,
            organization_id: k.organization_id,
            organization_name: k.organization_name,
            roles: k
                .roles
                .into_iter()
                .map(|(id, name)| CallKeyRole {
                    id,
                    name: Some(name),
                })
                .collect(),
        })
        .collect())
}

/// `summary` and `operationId` of each documented operation, by
/// `(METHOD, /api/path)`.
pub type OperationDocs = HashMap<(String, String), (Option<String>, Option<String>)>;

/// The operations of an OpenAPI document (JSON), by method and path.
pub fn operation_docs(json: &str) -> OperationDocs {
    let mut docs = OperationDocs::new();
    let Ok(doc) = serde_json::from_str::<Value>(json) else {
        return docs;
    };
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        return docs;
    };
    for (path, item) in paths {
        let Some(item) = item.as_object() else {
            continue;
        };
        for (method, op) in item {
            let method = method.to_ascii_uppercase();
            if !METHODS.contains(&method.as_str()) {
                continue;
            }
            let text = |key: &str| {
                op.get(key)
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
            };
            docs.insert(
                (method, path.clone()),
                (text("summary"), text("operationId")),
            );
        }
    }
    docs
}

/// The server's document, parsed once per document (the app's documents
/// never change once built).
static PARSED: Mutex<Option<(Arc<OpenApiJson>, Arc<OperationDocs>)>> = Mutex::new(None);

/// [`operation_docs`] of the app's document, kept while it is the same one.
pub fn documented(doc: Arc<OpenApiJson>) -> Arc<OperationDocs> {
    let mut parsed = PARSED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((seen, docs)) = parsed.as_ref()
        && Arc::ptr_eq(seen, &doc)
    {
        return docs.clone();
    }
    let docs = Arc::new(operation_docs(doc.json()));
    *parsed = Some((doc, docs.clone()));
    docs
}

/// The operations a rule may call; with `docs`, each one's summary and
/// operation id (the label then reads `METHOD /api/path - summary`).
pub fn call_options(registry: &Registry, docs: Option<&OperationDocs>) -> CallOptions {
    let mut endpoints: Vec<CallEndpoint> = registry
        .operations()
        .iter()
        .filter(|op| {
            let path = op.path;
            !path.contains('{')
                && !path.contains('[')
                && !path.starts_with("/docs")
                && !path.split('/').any(|s| s == "options")
                && path != SELF_PATH
                && matches!(op.access, Access::Features(_) | Access::Authenticated)
        })
        .map(|op| {
            let path = format!("/api{}", op.path);
            let method = op.method.as_openapi().to_ascii_uppercase();
            let features = match op.access {
                Access::Features(f) => f.iter().map(|s| (*s).to_string()).collect(),
                _ => Vec::new(),
            };
            let (summary, operation_id) = docs
                .and_then(|d| d.get(&(method.clone(), path.clone())))
                .cloned()
                .unwrap_or_default();
            let label = match &summary {
                Some(s) => format!("{method} {path} - {s}"),
                None => format!("{method} {path}"),
            };
            CallEndpoint {
                id: format!("{method} {path}"),
                label,
                path,
                method,
                summary,
                operation_id,
                required_features: features,
            }
        })
        .collect();
    let rank = |m: &str| {
        METHODS
            .iter()
            .position(|x| *x == m)
            .unwrap_or(METHODS.len())
    };
    endpoints.sort_by(|a, b| {
        a.path
            .cmp(&b.path)
            .then(rank(&a.method).cmp(&rank(&b.method)))
    });
    endpoints.dedup_by(|a, b| a.id == b.id);
    CallOptions {
        endpoints,
        api_keys: Vec::new(),
    }
}
