//! The operator docs state what the code does.

/// docs/operations.md lists each built-in role's default grants exactly as
/// the modules register them (`Registry::role_defaults`), so a module that
/// adds grants fails here until the docs say so.
#[test]
fn operations_md_lists_the_default_grants() {
    let registry = stoa_server::registry().unwrap();
    let docs = include_str!("../../../../docs/operations.md");
    let missing: Vec<String> = ["superadmin", "admin", "employee"]
        .iter()
        .map(|role| {
            let grants: Vec<String> = registry
                .role_defaults(role)
                .iter()
                .map(|g| format!("`{g}`"))
                .collect();
            format!("| `{role}` | {} |", grants.join(", "))
        })
        .filter(|line| !docs.contains(line.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/operations.md lacks the lines\n{}",
        missing.join("\n")
    );
}
