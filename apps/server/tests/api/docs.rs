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

/// Every migration has a version of its own: diesel keys applied migrations
/// by the timestamp prefix, so two folders sharing one would leave the
/// second unapplied (two branches merged on the same day did exactly that).
#[test]
fn migration_versions_are_unique() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
    let mut versions: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.split('_').next().unwrap_or_default().to_string()
        })
        .collect();
    let total = versions.len();
    versions.sort();
    versions.dedup();
    assert!(total > 10);
    assert_eq!(versions.len(), total, "two migrations share a version");
}
