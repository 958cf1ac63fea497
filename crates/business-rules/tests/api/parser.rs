//! Property tests of the condition parser: any JSON (and any near-valid
//! condition) parses or is refused with paths, never panics; a condition
//! that parses always evaluates, within the size limits.

use proptest::prelude::*;
use serde_json::{Value, json};
use stoa_business_rules::condition::{self, Schema, Scope};

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
        prop_oneof![
            Just("{{user.id}}"),
            Just("{{today}}"),
            Just("a.b[0]"),
            Just("^x+$")
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map(
                prop_oneof![
                    Just("field".to_string()),
                    Just("operator".to_string()),
                    Just("value".to_string()),
                    Just("valueField".to_string()),
                    Just("rules".to_string()),
                    "[a-z]{1,6}".prop_map(String::from),
                ],
                inner,
                0..5,
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn operator() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "=",
            "==",
            "!=",
            ">",
            ">=",
            "<",
            "<=",
            "IN",
            "NOT_IN",
            "CONTAINS",
            "NOT_CONTAINS",
            "STARTS_WITH",
            "ENDS_WITH",
            "MATCHES",
            "IS_EMPTY",
            "IS_NOT_EMPTY"
        ])
        .prop_map(String::from),
        ".{0,6}",
    ]
}

fn near_valid() -> impl Strategy<Value = Value> {
    let leaf = (
        prop_oneof![
            Just("a".to_string()),
            Just("b.c".to_string()),
            Just("items[1].x".to_string()),
            "[a-z_\\[\\]0-9.]{0,10}"
        ],
        operator(),
        any_json(),
    )
        .prop_map(|(field, op, value)| json!({"field": field, "operator": op, "value": value}));
    leaf.prop_recursive(7, 80, 5, |inner| {
        (
            prop::sample::select(vec!["AND", "OR", "NOT", "XOR"]),
            prop::collection::vec(inner, 0..5),
        )
            .prop_map(|(op, rules)| json!({"operator": op, "rules": rules}))
    })
}

fn check(input: &Value, data: &Value) {
    let schema = Schema { fields: None };
    match condition::parse(input, &schema) {
        Ok(parsed) => {
            let ctx = json!({"user": {"id": "u"}});
            let _ = parsed.eval(&Scope {
                data,
                context: &ctx,
                now: time::OffsetDateTime::now_utc(),
            });
        }
        Err(problems) => assert!(!problems.is_empty()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn any_json_parses_or_is_refused(input in any_json(), data in any_json()) {
        check(&input, &data);
    }

    #[test]
    fn near_valid_conditions_parse_or_are_refused_with_paths(input in near_valid(), data in any_json()) {
        let schema = Schema { fields: None };
        if let Err(problems) = condition::parse(&input, &schema) {
            for p in &problems {
                prop_assert!(!p.message.is_empty());
            }
        }
        check(&input, &data);
    }

    #[test]
    fn field_paths_parse_only_when_well_formed(path in "[a-zA-Z_0-9.\\[\\]$-]{0,20}") {
        if let Some(parsed) = condition::FieldPath::parse(&path) {
            prop_assert!(path.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_'));
            prop_assert!(!parsed.steps.is_empty());
        }
    }
}
