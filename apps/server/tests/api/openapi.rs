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
        "OrganizationList",
        "ActionList",
        "AccessList",
        "ProgressJob",
        "JobList",
    ] {
        assert!(
            doc["components"]["schemas"][schema].is_object(),
            "schema {schema} missing"
        );
    }
}
