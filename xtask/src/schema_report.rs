//! `cargo xtask schema-report [--write]`: how far the migrated schema is from
//! distributing tenants over Postgres nodes with Citus (distribution column
//! `tenant_id`). Every migration's `up.sql` is applied, in order, each in
//! one transaction (as `stoa migrate` does), to a scratch database; the
//! report is then read from pg_catalog:
//!
//! - a **tenant table** has a `tenant_id` column; it is distribution-ready
//!   when `tenant_id` is NOT NULL, is part of its primary key and of every
//!   unique index, and every foreign key either targets a reference table
//!   or another tenant table with `tenant_id` on both sides (co-location);
//! - a table without `tenant_id` that references a tenant table (directly
//!   or through another such table) hangs off tenant rows and needs the
//!   column; every other one is a **reference table** (copied to every node).
//!
//! The output is markdown; `--write` puts it into docs/scaling.md between
//! the `schema-report` markers.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use crate::cmd::{Result, output, root};
use crate::pg::{self, Database};

const BEGIN: &str = "<!-- schema-report:begin (cargo xtask schema-report --write) -->";
const END: &str = "<!-- schema-report:end -->";

pub fn run(args: &[String]) -> Result<u8> {
    let db = Database::discover()?;
    let result = report(&db);
    db.finish();
    let text = result?;
    if args.iter().any(|a| a == "--write") {
        let path = root().join("docs/scaling.md");
        let doc = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let (Some(start), Some(end)) = (doc.find(BEGIN), doc.find(END)) else {
            return Err(format!("{} has no schema-report markers", path.display()));
        };
        let updated = format!("{}{BEGIN}\n\n{text}\n{}", &doc[..start], &doc[end..]);
        std::fs::write(&path, updated)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("xtask: schema report written to docs/scaling.md");
    } else {
        print!("{text}");
    }
    Ok(0)
}

/// Applies every migration to a fresh database with psql.
fn migrate(url: &str) -> Result<usize> {
    let dir = root().join("migrations");
    let mut folders: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("up.sql").is_file())
        .collect();
    folders.sort();
    for folder in &folders {
        let (ok, out) = output(
            Command::new(pg::psql())
                .args(["-XAtq", "-1", "-v", "ON_ERROR_STOP=1", "-d", url, "-f"])
                .arg(folder.join("up.sql")),
        )?;
        if !ok {
            return Err(format!("{} failed: {out}", folder.display()));
        }
    }
    Ok(folders.len())
}

/// A unique index or foreign key, with its columns.
struct Key {
    name: String,
    columns: Vec<String>,
}

struct Fk {
    name: String,
    columns: Vec<String>,
    target: String,
    target_columns: Vec<String>,
}

#[derive(Default)]
struct Table {
    tenant: Option<bool>, // Some(not_null) when it has tenant_id
    primary: Option<Key>,
    unique: Vec<Key>,
    fks: Vec<Fk>,
}

fn split(list: &str) -> Vec<String> {
    list.split(',')
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

fn read_schema(db: &Database, url: &str) -> Result<BTreeMap<String, Table>> {
    let mut tables: BTreeMap<String, Table> = BTreeMap::new();
    let names = db.psql(
        url,
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition \
         AND c.relname NOT LIKE '\\_\\_diesel%'",
    )?;
    for name in names.lines().filter(|l| !l.is_empty()) {
        tables.insert(name.to_string(), Table::default());
    }
    let tenant = db.psql(
        url,
        "SELECT c.relname, a.attnotnull FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid \
         JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' \
         AND a.attname = 'tenant_id' AND a.attnum > 0 AND NOT a.attisdropped",
    )?;
    for line in tenant.lines() {
        if let Some((t, not_null)) = line.split_once('|')
            && let Some(table) = tables.get_mut(t)
        {
            table.tenant = Some(not_null == "t");
        }
    }
    // Expression columns (attnum 0) show as `(expr)`; a partial index is
    // marked, as Citus treats it like any other unique index.
    let unique = db.psql(
        url,
        "SELECT c.relname, ic.relname, i.indisprimary, \
         (SELECT string_agg(COALESCE(a.attname, '(expr)'), ',' ORDER BY k.ord) \
          FROM unnest(i.indkey) WITH ORDINALITY k(attnum, ord) \
          LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum) \
         FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid \
         JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = 'public' AND i.indisunique ORDER BY 1, 2",
    )?;
    for line in unique.lines() {
        let f: Vec<&str> = line.split('|').collect();
        if let [t, index, primary, columns] = f[..]
            && let Some(table) = tables.get_mut(t)
        {
            let key = Key {
                name: index.to_string(),
                columns: split(columns),
            };
            if primary == "t" {
                table.primary = Some(key);
            } else {
                table.unique.push(key);
            }
        }
    }
    let fks = db.psql(
        url,
        "SELECT c.relname, k.conname, t.relname, \
         (SELECT string_agg(a.attname, ',' ORDER BY u.ord) FROM unnest(k.conkey) \
          WITH ORDINALITY u(attnum, ord) JOIN pg_attribute a ON a.attrelid = k.conrelid \
          AND a.attnum = u.attnum), \
         (SELECT string_agg(a.attname, ',' ORDER BY u.ord) FROM unnest(k.confkey) \
          WITH ORDINALITY u(attnum, ord) JOIN pg_attribute a ON a.attrelid = k.confrelid \
          AND a.attnum = u.attnum) \
         FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid \
         JOIN pg_class t ON t.oid = k.confrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = 'public' AND k.contype = 'f' ORDER BY 1, 2",
    )?;
    for line in fks.lines() {
        let f: Vec<&str> = line.split('|').collect();
        if let [t, name, target, columns, target_columns] = f[..]
            && let Some(table) = tables.get_mut(t)
        {
            table.fks.push(Fk {
                name: name.to_string(),
                columns: split(columns),
                target: target.to_string(),
                target_columns: split(target_columns),
            });
        }
    }
    Ok(tables)
}

/// Tables without `tenant_id` that reference tenant rows (transitively).
fn children(tables: &BTreeMap<String, Table>) -> BTreeSet<String> {
    let mut hanging: BTreeSet<String> = BTreeSet::new();
    loop {
        let before = hanging.len();
        for (name, table) in tables {
            if table.tenant.is_none()
                && table.fks.iter().any(|fk| {
                    fk.target != *name
                        && (tables.get(&fk.target).is_some_and(|t| t.tenant.is_some())
                            || hanging.contains(&fk.target))
                })
            {
                hanging.insert(name.clone());
            }
        }
        if hanging.len() == before {
            return hanging;
        }
    }
}

/// What a tenant table needs before it can be distributed by `tenant_id`.
fn needs(
    tables: &BTreeMap<String, Table>,
    hanging: &BTreeSet<String>,
    table: &Table,
) -> Vec<String> {
    let mut out = Vec::new();
    if table.tenant == Some(false) {
        out.push("`tenant_id` is nullable (tenant-less rows need a home)".to_string());
    }
    let has_tenant = |cols: &[String]| cols.iter().any(|c| c == "tenant_id");
    match &table.primary {
        None => out.push("no primary key".into()),
        Some(pk) if !has_tenant(&pk.columns) => out.push(format!(
            "primary key ({}) without `tenant_id`",
            pk.columns.join(", ")
        )),
        Some(_) => {}
    }
    for key in table.unique.iter().filter(|k| !has_tenant(&k.columns)) {
        out.push(format!(
            "unique `{}` ({}) without `tenant_id`",
            key.name,
            key.columns.join(", ")
        ));
    }
    for fk in &table.fks {
        let target = tables.get(&fk.target);
        let target_tenant = target.is_some_and(|t| t.tenant.is_some());
        if target_tenant {
            let paired = fk
                .columns
                .iter()
                .zip(&fk.target_columns)
                .any(|(a, b)| a == "tenant_id" && b == "tenant_id");
            if !paired {
                out.push(format!(
                    "foreign key `{}` ({}) → `{}` without `tenant_id` on both sides",
                    fk.name,
                    fk.columns.join(", "),
                    fk.target
                ));
            }
        } else if hanging.contains(&fk.target) {
            out.push(format!(
                "foreign key `{}` → `{}`, which has no `tenant_id` yet",
                fk.name, fk.target
            ));
        }
    }
    out
}

fn report(db: &Database) -> Result<String> {
    let url = db.scratch_database("stoa_schema_report")?;
    let migrations = migrate(&url)?;
    let tables = read_schema(db, &url)?;
    let hanging = children(&tables);
    let tenant_tables: Vec<(&String, &Table)> =
        tables.iter().filter(|(_, t)| t.tenant.is_some()).collect();
    let mut ready = Vec::new();
    let mut rows = Vec::new();
    // Only the mechanical change: the primary key and foreign keys widened
    // by `tenant_id` (no nullable column, no global unique key).
    let mut mechanical = 0;
    for (name, table) in &tenant_tables {
        let needs = needs(&tables, &hanging, table);
        if needs.is_empty() {
            ready.push(format!("`{name}`"));
        } else {
            if needs
                .iter()
                .all(|n| n.starts_with("primary key") || n.starts_with("foreign key"))
            {
                mechanical += 1;
            }
            rows.push(format!("| `{name}` | {} |", needs.join("; ")));
        }
    }
    let mut child_rows = Vec::new();
    let mut reference = Vec::new();
    for (name, table) in tables.iter().filter(|(_, t)| t.tenant.is_none()) {
        if hanging.contains(name) {
            let parents: BTreeSet<&str> = table
                .fks
                .iter()
                .filter(|fk| {
                    tables.get(&fk.target).is_some_and(|t| t.tenant.is_some())
                        || hanging.contains(&fk.target)
                })
                .map(|fk| fk.target.as_str())
                .collect();
            let parents: Vec<String> = parents.iter().map(|p| format!("`{p}`")).collect();
            child_rows.push(format!(
                "| `{name}` | add `tenant_id` (from {}) to the table, its keys and its foreign keys |",
                parents.join(", ")
            ));
        } else {
            reference.push(format!("`{name}`"));
        }
    }
    let mut out = String::new();
    out.push_str(&format!(
        "Schema after {migrations} migrations: {} tables, {} with `tenant_id`. \
         **{} of {} tenant tables are distribution-ready** (`tenant_id` NOT NULL, in the \
         primary key and every unique index, foreign keys co-located or to reference \
         tables); {} tables without `tenant_id` hang off tenant rows; {} are reference tables.\n\n",
        tables.len(),
        tenant_tables.len(),
        ready.len(),
        tenant_tables.len(),
        child_rows.len(),
        reference.len()
    ));
    out.push_str(&format!(
        "Ready: {}. Of the other {}, {mechanical} need only the mechanical change \
         (primary key `(tenant_id, id)`, foreign keys gaining `tenant_id`); the rest \
         also have a nullable `tenant_id` or a unique key across tenants.\n\n",
        ready.join(", "),
        rows.len()
    ));
    out.push_str("| tenant table | what it needs |\n|---|---|\n");
    for row in &rows {
        out.push_str(row);
        out.push('\n');
    }
    out.push_str("\n| table without `tenant_id` | what it needs |\n|---|---|\n");
    for row in &child_rows {
        out.push_str(row);
        out.push('\n');
    }
    out.push_str(&format!(
        "\nReference tables (no `tenant_id`, no foreign key to tenant rows): {}.\n",
        reference.join(", ")
    ));
    Ok(out)
}
