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
