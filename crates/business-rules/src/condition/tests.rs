use serde_json::json;

use super::*;

fn any() -> Schema<'static> {
    Schema { fields: None }
}

fn eval(cond: Value, data: Value) -> bool {
    let c = parse(&cond, &any()).unwrap();
    let ctx = json!({"user": {"id": "u1"}, "entityType": "customers.deal"});
    c.eval(&Scope {
        data: &data,
        context: &ctx,
        now: time::macros::datetime!(2026-11-29 10:00 UTC),
    })
}

/// One row per operator and case: (operator, left, right, expected).
#[test]
fn operator_table() {
    let rows: &[(&str, Value, Value, bool)] = &[
        ("=", json!(5), json!("5"), true),
        ("==", json!("a"), json!("a"), true),
        ("=", json!("a"), json!("b"), false),
        ("=", json!(null), json!(null), true),
        ("=", json!(null), json!(0), false),
        ("=", json!(true), json!(1), true),
        ("=", json!({"a": 1}), json!({"a": 1}), false),
        ("!=", json!(1), json!(2), true),
        ("!=", json!("x"), json!("x"), false),
        (">", json!(10), json!(9), true),
        (">", json!("10"), json!("9"), true),
        (">", json!("b"), json!("a"), true),
        (">", json!(null), json!(0), false),
        (">", json!(0), json!(null), true),
        (
            ">",
            json!("2026-02-01"),
            json!("2026-01-31T23:00:00Z"),
            true,
        ),
        (">=", json!(3), json!(3), true),
        (">=", json!(null), json!(null), true),
        ("<", json!(2), json!(3), true),
        ("<", json!("2025-12-31"), json!("2026-01-01"), true),
        ("<=", json!(3), json!(2), false),
        ("<=", json!(2.5), json!("2.5"), true),
        ("IN", json!("won"), json!(["won", "lost"]), true),
        ("IN", json!(2), json!(["1", "2"]), true),
        ("IN", json!("x"), json!("x"), false),
        ("NOT_IN", json!("open"), json!(["won", "lost"]), true),
        ("NOT_IN", json!("x"), json!("not an array"), true),
        ("NOT_IN", json!("won"), json!(["won"]), false),
        ("CONTAINS", json!(["a", "b"]), json!("b"), true),
        ("CONTAINS", json!("hello world"), json!("lo w"), true),
        ("CONTAINS", json!(12345), json!("23"), false),
        ("CONTAINS", json!(null), json!("a"), false),
        ("NOT_CONTAINS", json!(["a"]), json!("b"), true),
        ("NOT_CONTAINS", json!("abc"), json!("b"), false),
        ("STARTS_WITH", json!("ACME Corp"), json!("ACME"), true),
        ("STARTS_WITH", json!(12345), json!("12"), true),
        ("STARTS_WITH", json!(null), json!(""), false),
        ("ENDS_WITH", json!("file.pdf"), json!(".pdf"), true),
        ("ENDS_WITH", json!("file.pdf"), json!(".doc"), false),
        ("MATCHES", json!("INV-0042"), json!("^INV-\\d{4}$"), true),
        ("MATCHES", json!("inv-42"), json!("^INV-\\d{4}$"), false),
        ("MATCHES", json!(null), json!(".*"), false),
        ("IS_EMPTY", json!(""), json!(null), true),
        ("IS_EMPTY", json!("  "), json!(null), true),
        ("IS_EMPTY", json!([]), json!(null), true),
        ("IS_EMPTY", json!({}), json!(null), true),
        ("IS_EMPTY", json!(0), json!(null), false),
        ("IS_NOT_EMPTY", json!("x"), json!(null), true),
        ("IS_NOT_EMPTY", json!(null), json!(null), false),
    ];
    for (op, left, right, expected) in rows {
        let cond = json!({"field": "x", "operator": op, "value": right});
        let got = eval(cond, json!({ "x": left }));
        assert_eq!(got, *expected, "{left} {op} {right}");
    }
    // An absent field is null/undefined.
    assert!(eval(
        json!({"field": "missing", "operator": "IS_EMPTY", "value": null}),
        json!({})
    ));
    assert!(eval(
        json!({"field": "missing", "operator": "=", "value": null}),
        json!({})
    ));
}

#[test]
fn groups_paths_fields_and_templates() {
    let data = json!({"deal": {"items": [{"qty": 3}], "owner": "u1", "min": 2}});
    let and = json!({"operator": "AND", "rules": [
        {"field": "deal.items[0].qty", "operator": ">", "value": 2},
        {"field": "deal.items.0.qty", "operator": ">", "valueField": "deal.min"},
        {"field": "deal.owner", "operator": "=", "value": "{{user.id}}"},
    ]});
    assert!(eval(and, data.clone()));
    let or = json!({"operator": "OR", "rules": [
        {"field": "deal.owner", "operator": "=", "value": "nobody"},
        {"field": "deal.owner", "operator": "=", "value": "u1"},
    ]});
    assert!(eval(or, data.clone()));
    let not = json!({"operator": "NOT", "rules": [
        {"field": "deal.owner", "operator": "=", "value": "u1"},
    ]});
    assert!(!eval(not, data.clone()));
    let not_all = json!({"operator": "NOT", "rules": [
        {"field": "deal.owner", "operator": "=", "value": "u1"},
        {"field": "deal.min", "operator": "=", "value": 3},
    ]});
    assert!(eval(not_all, data.clone()));
    let proto = json!({"field": "deal.__proto__", "operator": "IS_EMPTY", "value": null});
    assert!(eval(proto, data));
    let today = json!({"field": "d", "operator": "=", "value": "{{today}}"});
    assert!(eval(today, json!({"d": "2026-11-29"})));
}

#[test]
fn save_time_problems_name_their_paths() {
    let bad = json!({"operator": "AND", "rules": [
        {"field": "a", "operator": "LIKE", "value": 1},
        {"field": "1bad", "operator": "=", "value": 1},
        {"field": "a", "operator": "="},
        {"operator": "OR", "rules": []},
        {"field": "a", "operator": "MATCHES", "value": "(unclosed"},
        {"field": "a", "operator": "=", "valueField": 3},
    ]});
    let problems = parse(&bad, &any()).unwrap_err();
    let paths: Vec<String> = problems.iter().map(|p| p.path.join(".")).collect();
    assert_eq!(
        paths,
        [
            "rules.0.operator",
            "rules.1.field",
            "rules.2.value",
            "rules.3.rules",
            "rules.4.value",
            "rules.5.valueField",
        ]
    );
    let schema = Schema {
        fields: Some(&["title"]),
    };
    let unknown = parse(
        &json!({"field": "secret", "operator": "=", "value": 1}),
        &schema,
    )
    .unwrap_err();
    assert_eq!(unknown[0].message, "unknown field 'secret'");
    // Depth: six nested groups are refused.
    let mut deep = json!({"field": "a", "operator": "=", "value": 1});
    for _ in 0..6 {
        deep = json!({"operator": "AND", "rules": [deep]});
    }
    assert!(parse(&deep, &any()).is_err());
    // Too many children.
    let wide: Vec<Value> = (0..51)
        .map(|_| json!({"field": "a", "operator": "=", "value": 1}))
        .collect();
    assert!(parse(&json!({"operator": "OR", "rules": wide}), &any()).is_err());
    // A long pattern is refused at save time.
    let long = "a".repeat(201);
    assert!(
        parse(
            &json!({"field": "a", "operator": "MATCHES", "value": long}),
            &any()
        )
        .is_err()
    );
}

#[test]
fn catastrophic_patterns_run_in_linear_time() {
    let cond = json!({"field": "s", "operator": "MATCHES", "value": "^(a+)+$"});
    let input = format!("{}!", "a".repeat(9_000));
    let started = std::time::Instant::now();
    assert!(!eval(cond, json!({ "s": input })));
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
}

#[test]
fn text_paths_resolve_as_parsed_paths_do() {
    let data = json!({"a": {"b": [10, {"c": "x"}], "0": "zero", "__proto__": 1},
                      "list": [[1, 2], {"1": "one"}], "_u": true});
    for path in [
        "a",
        "a.b",
        "a.b[0]",
        "a.b[1].c",
        "a.b[1]c",
        "a.b.1.c",
        "a[0]",
        "a.0",
        "list[0][1]",
        "list[1][1]",
        "list.1.1",
        "_u",
        " a.b[0] ",
        "a..b",
        "a.",
        ".a",
        "1a",
        "a[",
        "a[]",
        "a[x]",
        "a]b",
        "a.b[1][",
        "a.__proto__",
        "a.b[0].c",
        "[0]",
        "a.[0]",
        "a-b",
        "",
    ] {
        let parsed = FieldPath::parse(path.trim()).and_then(|p| p.resolve(&data).cloned());
        assert_eq!(resolve_text(path, &data).cloned(), parsed, "{path}");
    }
}

#[test]
fn interpolation_leaves_unknown_placeholders() {
    let data = json!({"ruleId": "r1", "data": {"title": "Big"}});
    let now = time::macros::datetime!(2026-11-29 10:00 UTC);
    assert_eq!(
        interpolate("Deal {{data.title}} by {{ruleId}}: {{nope}}", &data, now),
        "Deal Big by r1: {{nope}}"
    );
}
