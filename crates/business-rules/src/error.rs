//! The module's failures, with the reference's messages, mapped to the API's
//! JSON errors in one place.

use actix_web::http::StatusCode;
use stoa_core::error::Issue;
use stoa_core::{ApiError, AppError};

use crate::condition::Problem;

#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("Rule not found")]
    RuleNotFound,
    #[error("Rule set not found")]
    SetNotFound,
    #[error("Member not found")]
    MemberNotFound,
    #[error("Log entry not found")]
    LogNotFound,
    #[error("Rule id is required")]
    RuleIdRequired,
    #[error("Rule set id is required")]
    SetIdRequired,
    #[error("Member id is required")]
    MemberIdRequired,
    #[error("Invalid rule id")]
    InvalidRuleId,
    #[error("Invalid rule set id")]
    InvalidSetId,
    #[error("Invalid log id")]
    InvalidLogId,
    #[error("Invalid rule ID")]
    InvalidExecuteRuleId,
    #[error("Tenant context required")]
    TenantRequired,
    #[error("Tenant and organization context required")]
    ScopeRequired,
    #[error("A rule with ruleId '{0}' already exists")]
    DuplicateRule(String),
    #[error("A rule set with setId '{0}' already exists")]
    DuplicateSet(String),
    #[error("Rule is already a member of this set")]
    AlreadyMember,
}

impl ApiError for RulesError {
    fn status(&self) -> StatusCode {
        match self {
            Self::RuleNotFound | Self::SetNotFound | Self::MemberNotFound | Self::LogNotFound => {
                StatusCode::NOT_FOUND
            }
            Self::DuplicateRule(_) | Self::DuplicateSet(_) | Self::AlreadyMember => {
                StatusCode::CONFLICT
            }
            _ => StatusCode::BAD_REQUEST,
        }
    }
}

impl From<RulesError> for AppError {
    fn from(err: RulesError) -> Self {
        AppError::from_api(err)
    }
}

/// 400 naming every problem's path (`Validation failed: <path>: <message>`,
/// the reference's shape G; the issues carry the same paths).
pub fn invalid(prefix: &str, problems: Vec<Problem>) -> AppError {
    let issues: Vec<Issue> = problems
        .into_iter()
        .map(|p| {
            let mut path: Vec<serde_json::Value> = Vec::new();
            if !prefix.is_empty() {
                path.push(prefix.into());
            }
            path.extend(p.path.into_iter().map(|s| match s.parse::<u64>() {
                Ok(n) => serde_json::Value::from(n),
                Err(_) => serde_json::Value::from(s),
            }));
            Issue {
                path,
                message: p.message,
                code: "custom".into(),
            }
        })
        .collect();
    let text: Vec<String> = issues
        .iter()
        .map(|i| {
            let path: Vec<String> = i
                .path
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                .collect();
            format!("{}: {}", path.join("."), i.message)
        })
        .collect();
    AppError::bad_request(format!("Validation failed: {}", text.join(", "))).with_issues(issues)
}

/// A unique index refusal as 409, anything else unchanged.
pub fn unique(err: diesel::result::Error, conflict: RulesError) -> AppError {
    match err {
        diesel::result::Error::DatabaseError(
            diesel::result::DatabaseErrorKind::UniqueViolation,
            _,
        ) => conflict.into(),
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_render_their_paths() {
        let err = invalid(
            "conditionExpression",
            vec![Problem::new(
                vec!["rules".into(), "0".into(), "operator".into()],
                "unknown operator 'LIKE'",
            )],
        );
        assert_eq!(err.status().as_u16(), 400);
        assert_eq!(
            err.body()["error"],
            "Validation failed: conditionExpression.rules.0.operator: unknown operator 'LIKE'"
        );
    }

    #[test]
    fn every_variant_renders_its_status_and_body() {
        let cases = [
            (RulesError::RuleNotFound, 404, "Rule not found"),
            (RulesError::SetNotFound, 404, "Rule set not found"),
            (RulesError::MemberNotFound, 404, "Member not found"),
            (RulesError::LogNotFound, 404, "Log entry not found"),
            (RulesError::RuleIdRequired, 400, "Rule id is required"),
            (RulesError::SetIdRequired, 400, "Rule set id is required"),
            (RulesError::MemberIdRequired, 400, "Member id is required"),
            (RulesError::InvalidRuleId, 400, "Invalid rule id"),
            (RulesError::InvalidSetId, 400, "Invalid rule set id"),
            (RulesError::InvalidLogId, 400, "Invalid log id"),
            (RulesError::InvalidExecuteRuleId, 400, "Invalid rule ID"),
            (RulesError::TenantRequired, 400, "Tenant context required"),
            (
                RulesError::ScopeRequired,
                400,
                "Tenant and organization context required",
            ),
            (
                RulesError::DuplicateRule("r1".into()),
                409,
                "A rule with ruleId 'r1' already exists",
            ),
            (
                RulesError::DuplicateSet("s1".into()),
                409,
                "A rule set with setId 's1' already exists",
            ),
            (
                RulesError::AlreadyMember,
                409,
                "Rule is already a member of this set",
            ),
        ];
        for (e, status, message) in cases {
            let app: AppError = e.into();
            assert_eq!(app.status().as_u16(), status, "{message}");
            assert_eq!(app.body(), serde_json::json!({ "error": message }));
        }
    }
}
