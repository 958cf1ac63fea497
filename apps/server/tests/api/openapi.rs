//! The OpenAPI document of the assembled server.

#[test]
fn every_operation_has_a_tag_responses_and_a_unique_operation_id() {
    let doc = serde_json::to_value(stoa_server::openapi().unwrap()).unwrap();
    let mut ids = std::collections::HashSet::new();
    let paths = doc["paths"].as_object().unwrap();
    assert!(!paths.is_empty());
    for (path, item) in paths {
        assert!(path.starts_with("/api/"), "{path} is outside /api");
        for (method, op) in item.as_object().unwrap() {
            assert!(
                op["tags"].as_array().is_some_and(|t| !t.is_empty()),
                "{method} {path} has no tag"
            );
            assert!(
                op["responses"].as_object().is_some_and(|r| !r.is_empty()),
                "{method} {path}"
            );
            let id = op["operationId"].as_str().unwrap_or_default().to_string();
            assert!(ids.insert(id.clone()), "duplicate operationId {id}");
        }
    }
}

#[test]
fn identity_and_directory_endpoints_are_documented_with_schemas() {
    let doc = serde_json::to_value(stoa_server::openapi().unwrap()).unwrap();
    let expected = [
        ("post", "/api/auth/login"),
        ("post", "/api/auth/logout"),
        ("post", "/api/auth/session/refresh"),
        ("get", "/api/auth/session/refresh"),
        ("get", "/api/auth/profile"),
        ("put", "/api/auth/profile"),
        ("post", "/api/auth/reset"),
        ("post", "/api/auth/reset/confirm"),
        ("get", "/api/auth/locale"),
        ("post", "/api/auth/locale"),
        ("post", "/api/auth/feature-check"),
        ("get", "/api/auth/features"),
        ("get", "/api/auth/autologin"),
        ("get", "/api/auth/users"),
        ("post", "/api/auth/users"),
        ("put", "/api/auth/users"),
        ("delete", "/api/auth/users"),
        ("get", "/api/auth/roles"),
        ("post", "/api/auth/roles"),
        ("put", "/api/auth/roles"),
        ("delete", "/api/auth/roles"),
        ("get", "/api/auth/roles/acl"),
        ("put", "/api/auth/roles/acl"),
        ("get", "/api/auth/users/acl"),
        ("put", "/api/auth/users/acl"),
        ("get", "/api/auth/admin/nav"),
        ("get", "/api/auth/sidebar/preferences"),
        ("put", "/api/auth/sidebar/preferences"),
        ("delete", "/api/auth/sidebar/preferences"),
        ("get", "/api/auth/sidebar/variants"),
        ("post", "/api/auth/sidebar/variants"),
        ("get", "/api/auth/sidebar/variants/{id}"),
        ("put", "/api/auth/sidebar/variants/{id}"),
        ("delete", "/api/auth/sidebar/variants/{id}"),
        ("get", "/api/auth/users/consents"),
        ("post", "/api/auth/users/resend-invite"),
        ("get", "/api/directory/tenants"),
        ("post", "/api/directory/tenants"),
        ("put", "/api/directory/tenants"),
        ("delete", "/api/directory/tenants"),
        ("get", "/api/directory/organizations"),
        ("post", "/api/directory/organizations"),
        ("put", "/api/directory/organizations"),
        ("delete", "/api/directory/organizations"),
        ("get", "/api/directory/tenants/lookup"),
        ("get", "/api/directory/organizations/lookup"),
        ("get", "/api/audit_logs/audit-logs/actions"),
        ("get", "/api/audit_logs/audit-logs/actions/export"),
        ("post", "/api/audit_logs/audit-logs/actions/undo"),
        ("post", "/api/audit_logs/audit-logs/actions/redo"),
        ("get", "/api/audit_logs/audit-logs/access"),
        ("get", "/api/progress/active"),
        ("get", "/api/progress/jobs"),
        ("post", "/api/progress/jobs"),
        ("get", "/api/progress/jobs/{id}"),
        ("put", "/api/progress/jobs/{id}"),
        ("delete", "/api/progress/jobs/{id}"),
        ("get", "/api/devices"),
        ("post", "/api/devices"),
        ("put", "/api/devices/{id}"),
        ("delete", "/api/devices/{id}"),
        ("get", "/api/devices/admin/devices"),
        ("post", "/api/devices/admin/devices"),
        ("get", "/api/devices/admin/devices/{id}"),
        ("put", "/api/devices/admin/devices/{id}"),
        ("delete", "/api/devices/admin/devices/{id}"),
        // The collection forms of the id-in-path writes (Open Mercato clients).
        ("put", "/api/auth/sidebar/variants"),
        ("delete", "/api/auth/sidebar/variants"),
        ("put", "/api/progress/jobs"),
        ("delete", "/api/progress/jobs"),
        ("put", "/api/devices"),
        ("delete", "/api/devices"),
        ("put", "/api/devices/admin/devices"),
        ("delete", "/api/devices/admin/devices"),
        ("get", "/api/directory/organization-switcher"),
    ];
    for (method, path) in expected {
        let op = &doc["paths"][path][method];
        assert!(op.is_object(), "{method} {path} is not documented");
        if (method == "post" || method == "put") && path != "/api/auth/logout" {
            assert!(
                op["requestBody"].is_object(),
                "{method} {path} has no request body schema"
            );
        }
        let ok = op["responses"]
            .as_object()
            .unwrap()
            .iter()
            .any(|(status, r)| {
                status.starts_with('2') && r["content"].is_object() || status.starts_with('3')
            });
        assert!(ok, "{method} {path} has no success response schema");
    }
    for schema in [
        "LoginResponse",
        "Profile",
        "FeatureCheckResponse",
        "NavPayload",
        "SidebarSettings",
        "PreferenceResponse",
        "PreferenceUpdated",
        "VariantList",
        "VariantResponse",
        "ConsentList",
        "InviteResent",
        "TenantList",
        "UserList",
        "RoleList",
        "RoleAclView",
        "UserAclView",
        "AclSaved",
        "OrganizationList",
        "OrganizationSwitcher",
        "ActionList",
        "AccessList",
        "ProgressJob",
        "JobList",
        "DeviceList",
        "DeviceItem",
        "DeviceDetail",
        "RegisterDevice",
        "AdminRegisterDevice",
        "UpdateDevice",
        "DeviceRegistered",
        "DeviceUpdated",
        "DeviceDeactivated",
    ] {
        assert!(
            doc["components"]["schemas"][schema].is_object(),
            "schema {schema} missing"
        );
    }
}

#[test]
fn device_schemas_never_expose_the_push_token() {
    let doc = serde_json::to_value(stoa_server::openapi().unwrap()).unwrap();
    let schemas = &doc["components"]["schemas"];
    for name in ["DeviceItem", "DeviceList", "DeviceDetail"] {
        let text = schemas[name].to_string();
        assert!(!text.is_empty() && text != "null", "{name} missing");
        assert!(
            !text.contains("push_token\""),
            "{name} exposes the push token: {text}"
        );
    }
    // The item lists the reference's snake_case fields.
    let props = schemas["DeviceItem"]["properties"].as_object().unwrap();
    for field in [
        "id",
        "tenant_id",
        "organization_id",
        "user_id",
        "device_id",
        "platform",
        "client_app_version",
        "os_version",
        "locale",
        "push_provider",
        "push_token_updated_at",
        "last_seen_at",
        "created_at",
        "updated_at",
    ] {
        assert!(props.contains_key(field), "DeviceItem.{field}");
    }
    // Only requests carry a token.
    assert!(schemas["RegisterDevice"]["properties"]["pushToken"].is_object());
}

#[test]
fn api_key_endpoints_are_documented_without_a_secret_in_listings() {
    let doc = serde_json::to_value(stoa_server::openapi().unwrap()).unwrap();
    for (method, path) in [
        ("get", "/api/api_keys/keys"),
        ("post", "/api/api_keys/keys"),
        ("delete", "/api/api_keys/keys"),
    ] {
        let op = &doc["paths"][path][method];
        assert!(op.is_object(), "{method} {path} is not documented");
        assert_eq!(op["tags"][0], "API Keys", "{method} {path}");
        let security = op["security"].to_string();
        assert!(
            security.contains("bearerAuth") && security.contains("apiKey"),
            "{method} {path}: {security}"
        );
        for status in ["400", "401", "403"] {
            assert!(
                op["responses"][status].is_object(),
                "{method} {path} lacks {status}"
            );
        }
    }
    let post = &doc["paths"]["/api/api_keys/keys"]["post"];
    assert!(post["requestBody"].is_object());
    assert!(post["responses"]["201"]["content"].is_object());
    assert!(doc["paths"]["/api/api_keys/keys"]["delete"]["responses"]["404"].is_object());
    let schemas = &doc["components"]["schemas"];
    for schema in [
        "ApiKeyList",
        "ApiKeyItem",
        "CreateApiKey",
        "CreatedApiKey",
        "ApiKeyDeleted",
    ] {
        assert!(schemas[schema].is_object(), "schema {schema} missing");
    }
    assert!(schemas["CreatedApiKey"]["properties"]["secret"].is_object());
    let item = schemas["ApiKeyItem"]["properties"].as_object().unwrap();
    assert!(!item.contains_key("secret") && !item.contains_key("keyHash"));
    let params: Vec<&str> = doc["paths"]["/api/api_keys/keys"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        params,
        ["page", "pageSize", "search", "cursor", "includeTotal"]
    );
}

/// Every `$ref` names a schema of `components` (a dangling one breaks client
/// generators), and no component is declared twice under one name with two
/// meanings (utoipa keeps the last, silently).
#[test]
fn every_ref_resolves() {
    fn walk(value: &serde_json::Value, refs: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::String(r)) = map.get("$ref") {
                    refs.push(r.clone());
                }
                map.values().for_each(|v| walk(v, refs));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, refs)),
            _ => {}
        }
    }
    let doc = serde_json::to_value(stoa_server::openapi().unwrap()).unwrap();
    let mut refs = Vec::new();
    walk(&doc, &mut refs);
    assert!(!refs.is_empty());
    let mut missing: Vec<String> = refs
        .into_iter()
        .filter(|r| doc.pointer(r.trim_start_matches('#')).is_none())
        .collect();
    missing.sort();
    missing.dedup();
    assert!(missing.is_empty(), "dangling $refs: {missing:?}");
}

/// What schemathesis found: answers the document did not describe.
#[test]
fn answers_the_api_gives_are_documented() {
    let doc = serde_json::to_value(stoa_server::openapi().unwrap()).unwrap();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let query = op["parameters"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|p| p["in"] == "query"));
            if query || op.get("requestBody").is_some() {
                assert!(
                    op["responses"].get("400").is_some(),
                    "{method} {path} parses input but documents no 400"
                );
            }
        }
    }
    for path in ["/api/auth/autologin", "/api/auth/session/refresh"] {
        assert!(
            doc["paths"][path]["get"]["responses"]["400"].is_object(),
            "{path}"
        );
    }
    assert!(doc["paths"]["/api/directory/organizations"]["post"]["responses"]["404"].is_object());
    // An empty list matches both the options and the tree shape: `anyOf`.
    let list = &doc["components"]["schemas"]["OrganizationList"];
    assert!(
        list["anyOf"].is_array() && list.get("oneOf").is_none(),
        "{list}"
    );
}

#[test]
fn every_protected_operation_takes_a_token_or_an_api_key() {
    // The explorer's Authorize dialog sends what an operation lists: an API
    // key must be listed wherever a bearer token is.
    let doc = serde_json::to_value(stoa_server::openapi().unwrap()).unwrap();
    let mut missing = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if op["x-public"] == serde_json::json!(true) {
                continue;
            }
            let security = op["security"].to_string();
            if !(security.contains("bearerAuth") && security.contains("apiKey")) {
                missing.push(format!("{method} {path}: {security}"));
            }
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
}

/// Every summary, description and title of the document: (where, text).
fn prose(value: &serde_json::Value, at: &str, out: &mut Vec<(String, String)>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, child) in map {
                let here = format!("{at}/{key}");
                match child {
                    serde_json::Value::String(text)
                        if matches!(key.as_str(), "summary" | "description" | "title") =>
                    {
                        out.push((here, text.clone()));
                    }
                    _ => prose(child, &here, out),
                }
            }
        }
        serde_json::Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                prose(child, &format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// The descriptions speak to API clients (what a call does, its limits and
/// errors); how stoa is built stays in the code's comments.
#[test]
fn descriptions_never_talk_about_internals() {
    let doc = serde_json::to_value(stoa_server::openapi().unwrap()).unwrap();
    let mut texts = Vec::new();
    prose(&doc, "", &mut texts);
    assert!(texts.len() > 500, "the walk found the descriptions");
    // Crate and module paths, Rust doc links, table names, the tracker and
    // the notes stoa was built from.
    let internal = [
        "stoa_",
        "crate",
        "mail_outbox",
        "_outbox",
        "issue ",
        "::",
        "[`",
        "unwrap",
        "diesel",
        "the reference",
        "handler",
    ];
    let found: Vec<String> = texts
        .iter()
        .filter_map(|(at, text)| {
            let lower = text.to_lowercase();
            let terms: Vec<&str> = internal
                .iter()
                .copied()
                .filter(|term| lower.contains(term))
                .collect();
            (!terms.is_empty()).then(|| format!("{at}: {terms:?}: {text}"))
        })
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n\n"));
}
