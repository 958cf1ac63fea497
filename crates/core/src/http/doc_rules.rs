//! Rules the generated OpenAPI document follows whatever each handler's
//! annotation says, applied once to the assembled document
//! ([`super::openapi_doc`]).
//!
//! - **400 is documented wherever input is parsed.** Every operation with
//!   path or query parameters or a request body can answer 400: the extractors refuse
//!   malformed values and control characters in any name or value before the
//!   handler runs. An annotation that forgot it would make the document lie
//!   to a client (and to schemathesis).
//! - **Security comes from the access declaration.** An operation the
//!   access policy declares (its `x-required-features` extension) and not
//!   public (`x-public`) requires credentials: it lists `bearerAuth` unless
//!   its annotation says more, so no handler repeats what the authorization
//!   matrix already says.
//! - **403 is documented wherever features are required.** The access
//!   check refuses a caller without every feature in `x-required-features`
//!   before the handler runs.
//! - **401 is documented wherever credentials are required.** The
//!   authenticator refuses a missing, expired or revoked token or API key
//!   before any handler runs, so an annotation need not (and does not)
//!   list it unless it has more to say.
//! - **503 is documented everywhere.** Any operation can find the database
//!   (or the object store) unavailable: it answers 503 at once instead of
//!   hanging (`cargo xtask faults` crashes Postgres under load and checks
//!   it). The system endpoints that touch neither answer it never, which
//!   the document may over-state.
//! - **Untagged unions are `anyOf`.** utoipa renders a `#[serde(untagged)]`
//!   enum as `oneOf`, which claims that exactly one branch matches; two
//!   branches of the same shape (an empty `items` list of options or of tree
//!   nodes) then match both and a valid answer fails validation. serde picks
//!   the first branch that fits, which is what `anyOf` says. A `oneOf` with a
//!   discriminator is left as it is.
//! - **An API key goes wherever a bearer token goes.** Every protected
//!   endpoint accepts `x-api-key` as well as `Authorization: Bearer`
//!   (stoa-api-keys' authenticator), so an operation requiring `bearerAuth`
//!   also lists `apiKey` as an alternative: the explorer's "Authorize"
//!   dialog then sends either to every such operation.

use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::schema::{AnyOf, Schema};
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr, ResponseBuilder};

/// Applies the rules above to `doc`.
pub fn apply(mut doc: OpenApi) -> OpenApi {
    for item in doc.paths.paths.values_mut() {
        let ops = [
            &mut item.get,
            &mut item.post,
            &mut item.put,
            &mut item.patch,
            &mut item.delete,
        ];
        for op in ops.into_iter().flatten() {
            secured_as_declared(op);
            document_forbidden(op);
            document_bad_request(op);
            document_unauthorized(op);
            document_unavailable(op);
            api_key_beside_bearer(op);
        }
    }
    if let Some(components) = doc.components.as_mut() {
        for schema in components.schemas.values_mut() {
            untagged_as_any_of(schema);
        }
    }
    doc
}

fn takes_input(op: &Operation) -> bool {
    // Path segments are parsed too (an id that is not a UUID, control
    // characters): 400 before the handler runs.
    let query = op.parameters.as_ref().is_some_and(|ps| {
        ps.iter().any(|p| {
            matches!(p, RefOr::T(p) if matches!(p.parameter_in, ParameterIn::Query | ParameterIn::Path))
        })
    });
    query || op.request_body.is_some()
}

fn document_bad_request(op: &mut Operation) {
    if takes_input(op) {
        document(
            op,
            "400",
            "Malformed input: a value of the wrong type or range, or control \
             characters in a name or value",
        );
    }
}

/// The features the access policy declared for `op` (`None`: undeclared).
fn declared_features(op: &Operation) -> Option<&serde_json::Value> {
    op.extensions.as_ref()?.get("x-required-features")
}

fn declared_public(op: &Operation) -> bool {
    op.extensions
        .as_ref()
        .is_some_and(|e| e.get("x-public").is_some())
}

fn secured_as_declared(op: &mut Operation) {
    let unsecured = op.security.as_ref().is_none_or(Vec::is_empty);
    if unsecured && declared_features(op).is_some() && !declared_public(op) {
        op.security = Some(vec![SecurityRequirement::new(
            "bearerAuth",
            Vec::<String>::new(),
        )]);
    }
}

fn document_forbidden(op: &mut Operation) {
    let requires = declared_features(op)
        .and_then(serde_json::Value::as_array)
        .is_some_and(|features| !features.is_empty());
    if requires {
        document(
            op,
            "403",
            "The caller lacks a feature this operation requires (`x-required-features`) \
             in the selected organization",
        );
    }
}

/// A protected operation (a security requirement, none of them empty: an
/// empty one would make credentials optional) answers 401 before its
/// handler runs when they are missing, expired or revoked.
fn document_unauthorized(op: &mut Operation) {
    let protected = op
        .security
        .as_ref()
        .is_some_and(|all| !all.is_empty() && !all.contains(&SecurityRequirement::default()));
    if protected {
        document(
            op,
            "401",
            "Not signed in: no, an expired or a revoked token or API key",
        );
    }
}

fn document_unavailable(op: &mut Operation) {
    document(
        op,
        "503",
        "The database or the object store is unavailable (retry later)",
    );
}

/// Documents `status` with an `ErrorBody` and `description` unless the
/// annotation already says what it means there.
fn document(op: &mut Operation, status: &str, description: &str) {
    op.responses
        .responses
        .entry(status.into())
        .or_insert_with(|| {
            RefOr::T(
                ResponseBuilder::new()
                    .description(description)
                    .content(
                        "application/json",
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name("ErrorBody")))
                            .build(),
                    )
                    .build(),
            )
        });
}

fn api_key_beside_bearer(op: &mut Operation) {
    let Some(security) = op.security.as_mut() else {
        return;
    };
    let bearer = SecurityRequirement::new("bearerAuth", Vec::<String>::new());
    let key = SecurityRequirement::new("apiKey", Vec::<String>::new());
    if security.contains(&bearer) && !security.contains(&key) {
        security.push(key);
    }
}

fn untagged_as_any_of(schema: &mut RefOr<Schema>) {
    let RefOr::T(Schema::OneOf(one)) = schema else {
        return;
    };
    if one.discriminator.is_some() {
        return;
    }
    let mut any = AnyOf::new();
    any.items = std::mem::take(&mut one.items);
    any.description = one.description.take();
    any.example = one.example.take();
    any.examples = std::mem::take(&mut one.examples);
    any.default = one.default.take();
    *schema = RefOr::T(Schema::AnyOf(any));
}

#[cfg(test)]
mod tests {
    use utoipa::openapi::path::{OperationBuilder, ParameterBuilder};
    use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder};
    use utoipa::openapi::{ComponentsBuilder, OpenApiBuilder, PathItem, PathsBuilder};

    use super::*;

    #[test]
    fn input_taking_operations_get_a_400_and_unions_become_any_of() {
        let with_query = OperationBuilder::new()
            .parameter(
                ParameterBuilder::new()
                    .name("q")
                    .parameter_in(ParameterIn::Query),
            )
            .build();
        let with_path = OperationBuilder::new()
            .parameter(
                ParameterBuilder::new()
                    .name("id")
                    .parameter_in(ParameterIn::Path),
            )
            .build();
        let without = OperationBuilder::new().build();
        let union = OneOfBuilder::new()
            .item(ObjectBuilder::new())
            .item(ObjectBuilder::new())
            .build();
        let doc = OpenApiBuilder::new()
            .paths(
                PathsBuilder::new()
                    .path(
                        "/a",
                        PathItem::new(utoipa::openapi::HttpMethod::Get, with_query),
                    )
                    .path(
                        "/b",
                        PathItem::new(utoipa::openapi::HttpMethod::Get, without),
                    )
                    .path(
                        "/c/{id}",
                        PathItem::new(utoipa::openapi::HttpMethod::Get, with_path),
                    ),
            )
            .components(Some(
                ComponentsBuilder::new()
                    .schema("U", Schema::OneOf(union))
                    .build(),
            ))
            .build();
        let doc = serde_json::to_value(apply(doc)).unwrap_or_default();
        assert!(
            doc["paths"]["/a"]["get"]["responses"]["400"].is_object(),
            "{doc}"
        );
        assert!(doc["paths"]["/b"]["get"]["responses"].get("400").is_none());
        assert!(
            doc["paths"]["/c/{id}"]["get"]["responses"]["400"].is_object(),
            "{doc}"
        );
        // Every operation can find the database or the store unavailable.
        for path in ["/a", "/b", "/c/{id}"] {
            assert!(
                doc["paths"][path]["get"]["responses"]["503"].is_object(),
                "{doc}"
            );
        }
        assert!(
            doc["components"]["schemas"]["U"]["anyOf"].is_array(),
            "{doc}"
        );
    }

    #[test]
    fn an_operation_taking_a_bearer_token_takes_an_api_key_too() {
        let bearer = || SecurityRequirement::new("bearerAuth", Vec::<String>::new());
        let op = OperationBuilder::new().security(bearer()).build();
        let public = OperationBuilder::new().build();
        let doc = OpenApiBuilder::new()
            .paths(
                PathsBuilder::new()
                    .path("/p", PathItem::new(utoipa::openapi::HttpMethod::Get, op))
                    .path(
                        "/q",
                        PathItem::new(utoipa::openapi::HttpMethod::Get, public),
                    ),
            )
            .build();
        let doc = serde_json::to_value(apply(doc)).unwrap_or_default();
        assert_eq!(
            doc["paths"]["/p"]["get"]["security"],
            serde_json::json!([{"bearerAuth": []}, {"apiKey": []}])
        );
        assert!(doc["paths"]["/q"]["get"].get("security").is_none(), "{doc}");
    }

    #[test]
    fn a_protected_operation_documents_401_and_a_public_or_optional_one_does_not() {
        use utoipa::openapi::ResponsesBuilder;
        let bearer = || SecurityRequirement::new("bearerAuth", Vec::<String>::new());
        let protected = OperationBuilder::new().security(bearer()).build();
        let public = OperationBuilder::new().build();
        let optional = OperationBuilder::new()
            .security(SecurityRequirement::default())
            .security(bearer())
            .build();
        let described = OperationBuilder::new()
            .security(bearer())
            .responses(
                ResponsesBuilder::new()
                    .response("401", ResponseBuilder::new().description("Own words")),
            )
            .build();
        let get = |op| PathItem::new(utoipa::openapi::HttpMethod::Get, op);
        let doc = OpenApiBuilder::new()
            .paths(
                PathsBuilder::new()
                    .path("/protected", get(protected))
                    .path("/public", get(public))
                    .path("/optional", get(optional))
                    .path("/described", get(described)),
            )
            .build();
        let doc = serde_json::to_value(apply(doc)).unwrap_or_default();
        let unauthorized = |path: &str| doc["paths"][path]["get"]["responses"]["401"].clone();
        assert_eq!(
            unauthorized("/protected")["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/ErrorBody",
            "{doc}"
        );
        assert!(unauthorized("/public").is_null(), "{doc}");
        assert!(unauthorized("/optional").is_null(), "{doc}");
        assert_eq!(
            unauthorized("/described")["description"],
            "Own words",
            "{doc}"
        );
    }

    #[test]
    fn declared_operations_take_security_and_a_403_from_their_declaration() {
        use utoipa::openapi::extensions::ExtensionsBuilder;
        let declared = |features: serde_json::Value, public: bool| {
            let mut extensions = ExtensionsBuilder::new().add("x-required-features", features);
            if public {
                extensions = extensions.add("x-public", true);
            }
            OperationBuilder::new()
                .extensions(Some(extensions.build()))
                .build()
        };
        let get = |op| PathItem::new(utoipa::openapi::HttpMethod::Get, op);
        let doc = OpenApiBuilder::new()
            .paths(
                PathsBuilder::new()
                    .path(
                        "/featured",
                        get(declared(serde_json::json!(["x.view"]), false)),
                    )
                    .path("/signed-in", get(declared(serde_json::json!([]), false)))
                    .path("/public", get(declared(serde_json::json!([]), true)))
                    .path("/undeclared", get(OperationBuilder::new().build())),
            )
            .build();
        let doc = serde_json::to_value(apply(doc)).unwrap_or_default();
        let op = |path: &str| doc["paths"][path]["get"].clone();
        let both = serde_json::json!([{"bearerAuth": []}, {"apiKey": []}]);
        assert_eq!(op("/featured")["security"], both, "{doc}");
        assert!(op("/featured")["responses"]["401"].is_object(), "{doc}");
        assert!(op("/featured")["responses"]["403"].is_object(), "{doc}");
        assert_eq!(op("/signed-in")["security"], both, "{doc}");
        assert!(op("/signed-in")["responses"]["403"].is_null(), "{doc}");
        for path in ["/public", "/undeclared"] {
            assert!(op(path).get("security").is_none(), "{doc}");
            assert!(op(path)["responses"]["401"].is_null(), "{doc}");
            assert!(op(path)["responses"]["403"].is_null(), "{doc}");
        }
    }
}
