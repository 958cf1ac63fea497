use std::sync::Arc;

use super::*;

struct Named(&'static str);

impl WriteGuard for Named {
    fn id(&self) -> &str {
        self.0
    }
    fn check<'a>(
        &'a self,
        _: &'a mut AsyncPgConnection,
        _: &'a GuardInput<'a>,
    ) -> BoxFuture<'a, Result<Verdict, AppError>> {
        Box::pin(async { Ok(Verdict::Allow) })
    }
}

#[test]
fn refusal_names_the_guard_and_lists_the_violations() {
    let err = refused("rules.credit_limit", "Credit limit exceeded");
    assert_eq!(err.status(), 422);
    assert_eq!(
        err.message(),
        "Refused by guard 'rules.credit_limit': Credit limit exceeded"
    );
    assert_eq!(err.code(), Some("guard_refused"));
    assert_eq!(err.body()["guard"], "rules.credit_limit");
    assert_eq!(
        err.body()["details"],
        serde_json::json!({
            "guard": "rules.credit_limit",
            "violations": [{"message": "Credit limit exceeded"}]
        })
    );
    let err = refused_with(
        "rules.deal",
        &[
            Violation::new("Amount too high")
                .code("amount_max")
                .field("amount"),
            Violation::new("Stage is closed"),
        ],
    );
    assert_eq!(
        err.message(),
        "Refused by guard 'rules.deal': Amount too high; Stage is closed"
    );
    assert_eq!(
        err.body()["details"]["violations"],
        serde_json::json!([
            {"message": "Amount too high", "code": "amount_max", "field": "amount"},
            {"message": "Stage is closed"}
        ])
    );
    assert_eq!(Verdict::Allow.violations(), None);
}

#[test]
fn a_guard_registered_again_replaces_the_earlier_one() {
    let guards = WriteGuards::default()
        .with(Arc::new(Named("a")))
        .with(Arc::new(Named("b")))
        .with(Arc::new(Named("a")));
    assert_eq!(format!("{guards:?}"), r#"["b", "a"]"#);
    assert_eq!(guards.len(), 2);
}
