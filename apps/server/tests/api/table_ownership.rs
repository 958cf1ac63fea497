//! "A module owns its tables and never reads another's" (ARCHITECTURE.md),
//! checked over the source: every table is owned by the module whose
//! migration creates it (`migrations/<date>_<module>_<what>`), and the SQL
//! in a crate's `src/` (string literals and diesel `table!` declarations)
//! names only its own tables and stoa-core's shared infrastructure. Another
//! module's data is reached through its interface (`stoa_acl::accounts`,
//! `organizations`, `keys`, the registry's slots) or the SQL expression its
//! owner hands out (`role_names_sql`), which lives in the owner's crate.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use regex::Regex;

/// Module ids as migration folders spell them (longest first), and the
/// crate each one is.
const MODULES: &[(&str, &str)] = &[
    ("business_rules", "business-rules"),
    ("ai_assistant", "ai-assistant"),
    ("attachments", "attachments"),
    ("action_logs", "core"),
    ("dashboards", "dashboards"),
    ("onboarding", "onboarding"),
    ("directory", "directory"),
    ("customers", "customers"),
    // The audit trail's partitions: stoa-core's tables (its command bus
    // writes them; stoa-audit-logs is their API).
    ("audit_log", "core"),
    ("api_keys", "api-keys"),
    ("progress", "progress"),
    ("catalog", "catalog"),
    ("devices", "devices"),
    ("auth", "auth"),
    ("core", "core"),
    ("jobs", "jobs"),
    ("mail", "mail"),
    ("ai", "ai-assistant"),
];

/// Tables created by another module's migration but owned by a crate that
/// split off from it: stoa-preferences holds the auth module's personal
/// settings (auth's migrations created them). Every other auth table, roles
/// included, it reaches through `RoleDirectory` and `UserDirectory` only.
const MOVED: &[(&str, &str)] = &[
    ("user_sidebar_preferences", "preferences"),
    ("role_sidebar_preferences", "preferences"),
    ("sidebar_variants", "preferences"),
    ("user_consents", "preferences"),
];

/// Reads of another module's table that are the design: `(crate, table,
/// reason)`. stoa-core's own tables (the action log, the outbox, read
/// versions) are the platform's shared infrastructure and need no entry.
const ALLOWED: &[(&str, &str, &str)] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Table → owning crate, from the migrations that create them.
fn owners() -> BTreeMap<String, String> {
    let create =
        Regex::new(r"(?i)\bCREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)").unwrap();
    let mut dirs: Vec<PathBuf> = fs::read_dir(root().join("migrations"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut owners = BTreeMap::new();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let (_, rest) = name.split_once('_').unwrap();
        let (_, owner) = MODULES
            .iter()
            .find(|(module, _)| rest.starts_with(module))
            .unwrap_or_else(|| panic!("{name}: no module named in the migration's folder"));
        let sql = fs::read_to_string(dir.join("up.sql")).unwrap();
        for table in create.captures_iter(&sql) {
            // The first migration that creates a table owns it (a later one
            // may rebuild it, e.g. to partition it).
            owners
                .entry(table[1].to_lowercase())
                .or_insert_with(|| owner.to_string());
        }
    }
    for (table, owner) in MOVED {
        owners.insert(table.to_string(), owner.to_string());
    }
    owners
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The tables a source file names in SQL: after FROM/JOIN/UPDATE/INTO/TABLE
/// inside string literals, and diesel `table!` declarations.
fn tables_named(source: &str) -> BTreeSet<String> {
    // `\\(?s:.)`: an escape may be a line continuation (`\\` then a newline).
    let literal = Regex::new(r##"r#*"(?s:.*?)"#*|"(?:[^"\\]|\\(?s:.))*""##).unwrap();
    let keyword = Regex::new(
        r"(?i)\b(?:FROM|JOIN|UPDATE|INTO|TABLE|TRUNCATE)\s+(?:ONLY\s+)?([a-z_][a-z0-9_]*)\b",
    )
    .unwrap();
    let declared =
        Regex::new(r"(?m)^\s*(?:diesel::)?table!\s*\{\s*([a-z_][a-z0-9_]*)\s*\(").unwrap();
    let declared_block = Regex::new(r"(?m)^\s+([a-z_][a-z0-9_]*)\s*\([a-z_, ]+\)\s*\{").unwrap();
    let mut named = BTreeSet::new();
    for text in literal.find_iter(source) {
        for table in keyword.captures_iter(text.as_str()) {
            named.insert(table[1].to_lowercase());
        }
    }
    for table in declared.captures_iter(source) {
        named.insert(table[1].to_string());
    }
    if source.contains("table!") {
        for table in declared_block.captures_iter(source) {
            named.insert(table[1].to_string());
        }
    }
    named
}

#[test]
fn no_crate_reads_another_modules_tables() {
    let owners = owners();
    assert!(owners.len() > 40, "the migrations create the tables");
    let mut crates: Vec<(String, PathBuf)> = fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("src").is_dir())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    crates.sort();
    let mut found = Vec::new();
    for (name, path) in &crates {
        // The test kit's helpers inspect every table for tests; the server
        // wires modules and owns none.
        if name == "testkit" {
            continue;
        }
        let module = name.as_str();
        let mut files = Vec::new();
        rust_files(&path.join("src"), &mut files);
        for file in files {
            let source = fs::read_to_string(&file).unwrap();
            for table in tables_named(&source) {
                let Some(owner) = owners.get(&table) else {
                    continue;
                };
                let allowed = ALLOWED.iter().any(|(c, t, _)| c == name && *t == table);
                if owner != module && owner != "core" && !allowed {
                    found.push(format!(
                        "{}: names `{table}`, owned by {owner}",
                        file.strip_prefix(root()).unwrap_or(&file).display()
                    ));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "crates read other modules' tables (use the owner's interface):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_finds_a_foreign_read() {
    // The check itself must be able to fail.
    let named = tables_named(r#"let q = "SELECT id FROM roles r JOIN users u ON u.id = r.id";"#);
    assert!(named.contains("roles") && named.contains("users"));
    let declared =
        tables_named("diesel::table! {\n    api_keys (id) {\n        id -> Uuid,\n    }\n}\n");
    assert!(declared.contains("api_keys"));
    assert!(tables_named("// a comment FROM roles").is_empty());
    // A literal continued over lines is one literal.
    let continued = tables_named(
        "let q = \"WITH t AS (SELECT 1) \\\n    INSERT INTO mail_outbox (a) SELECT 1\";",
    );
    assert!(continued.contains("mail_outbox"), "{continued:?}");
}
