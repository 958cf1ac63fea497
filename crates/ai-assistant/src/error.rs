//! The assistant's failures with their typed codes (`{error, code}`), mapped
//! to the API's JSON errors in one place.

use actix_web::http::StatusCode;
use stoa_core::{ApiError, AppError};

#[derive(Debug, thiserror::Error)]
pub enum AiError {
    #[error("Invalid agent id")]
    InvalidAgentId,
    #[error("{0}")]
    Validation(String),
    #[error("Unknown agent")]
    AgentUnknown,
    #[error("The caller lacks the features this agent requires")]
    AgentFeaturesDenied,
    #[error("Tool is not registered")]
    ToolUnknown,
    #[error("Tool is not whitelisted for this agent")]
    ToolNotWhitelisted,
    /// At confirm time: the tool is gone, no longer allowed or no mutation.
    #[error("Tool is not whitelisted for this agent")]
    ToolNoLongerAllowed,
    #[error("The caller lacks the features this tool requires")]
    ToolFeaturesDenied,
    #[error("Mutations are blocked for this read-only agent")]
    MutationBlockedByReadonly,
    #[error("Mutations are blocked by the agent's mutation policy")]
    MutationBlockedByPolicy,
    #[error("This agent is read-only")]
    ReadOnlyAgent,
    #[error("The agent does not support this execution mode")]
    ExecutionModeNotSupported { object_route: bool },
    #[error("Runtime overrides are disabled for this agent")]
    RuntimeOverrideDisabled,
    #[error("Unknown provider")]
    ProviderUnknown,
    #[error("The provider is not configured")]
    ProviderNotConfigured,
    #[error("The provider is not allowlisted")]
    ProviderNotAllowlisted,
    #[error("The model is not allowlisted")]
    ModelNotAllowlisted,
    #[error("The base URL is not allowlisted")]
    BaseUrlNotAllowlisted,
    #[error("The provider is not in the environment allowlist")]
    ProviderNotInEnvAllowlist,
    #[error("The model is not in the environment allowlist")]
    ModelNotInEnvAllowlist,
    #[error("agentId is required for allowed-override lists")]
    AgentRequired,
    #[error("The loop budget cannot be overridden for this agent")]
    LoopRuntimeOverrideDisabled,
    #[error("Invalid loop override")]
    InvalidLoopOverride(String),
    #[error("The override would escalate the agent's mutation policy")]
    EscalationNotAllowed {
        declared: &'static str,
        requested: String,
    },
    #[error("Reserved prompt section keys cannot be overridden")]
    ReservedKey(Vec<String>),
    #[error("No AI provider is configured")]
    NoProvider,
    #[error("Pending action not found")]
    PendingActionNotFound,
    #[error("The pending action is not pending")]
    InvalidStatus,
    #[error("The pending action has expired")]
    Expired,
    #[error("The record changed since the action was proposed")]
    StaleVersion,
    #[error("The stored input no longer matches the tool's schema")]
    SchemaDrift,
    #[error("Conversation not found")]
    ConversationNotFound,
    #[error("Participant not found")]
    ParticipantNotFound,
    #[error("You cannot share a conversation with yourself")]
    SelfShare,
    #[error("User not found")]
    UserNotFound,
    #[error("The user is already a participant")]
    DuplicateParticipant,
    #[error("The message was blocked by input moderation")]
    ModerationBlocked,
    #[error("There is no question to answer")]
    QuestionNotFound,
    #[error("No AI provider is configured")]
    RouterUnavailable,
    #[error("The AI provider failed")]
    RouterFailed,
    #[error("Session not found")]
    SessionNotFound,
    #[error("The model did not produce an object matching the agent's output schema")]
    ObjectInvalid,
    #[error("Tenant context required")]
    TenantRequired,
    #[error("Organization not found or inactive")]
    OrganizationNotFound,
    #[error("Forbidden")]
    Forbidden,
    #[error(transparent)]
    Db(#[from] stoa_core::db::DbError),
}

impl From<diesel::result::Error> for AiError {
    fn from(err: diesel::result::Error) -> Self {
        Self::Db(err.into())
    }
}

impl ApiError for AiError {
    fn status(&self) -> StatusCode {
        match self {
            Self::InvalidAgentId
            | Self::Validation(_)
            | Self::RuntimeOverrideDisabled
            | Self::ProviderUnknown
            | Self::ProviderNotConfigured
            | Self::ProviderNotAllowlisted
            | Self::ModelNotAllowlisted
            | Self::BaseUrlNotAllowlisted
            | Self::ProviderNotInEnvAllowlist
            | Self::ModelNotInEnvAllowlist
            | Self::AgentRequired
            | Self::InvalidLoopOverride(_)
            | Self::EscalationNotAllowed { .. }
            | Self::ReservedKey(_)
            | Self::SelfShare
            | Self::ModerationBlocked
            | Self::UserNotFound
            | Self::OrganizationNotFound
            | Self::TenantRequired => StatusCode::BAD_REQUEST,
            Self::AgentFeaturesDenied
            | Self::ToolNoLongerAllowed
            | Self::ToolFeaturesDenied
            | Self::ReadOnlyAgent
            | Self::Forbidden => StatusCode::FORBIDDEN,
            Self::AgentUnknown
            | Self::PendingActionNotFound
            | Self::ConversationNotFound
            | Self::ParticipantNotFound
            | Self::QuestionNotFound
            | Self::SessionNotFound => StatusCode::NOT_FOUND,
            Self::ToolUnknown
            | Self::ToolNotWhitelisted
            | Self::MutationBlockedByReadonly
            | Self::MutationBlockedByPolicy
            | Self::InvalidStatus
            | Self::Expired
            | Self::DuplicateParticipant
            | Self::LoopRuntimeOverrideDisabled => StatusCode::CONFLICT,
            Self::ExecutionModeNotSupported { object_route } => {
                if *object_route {
                    StatusCode::UNPROCESSABLE_ENTITY
                } else {
                    StatusCode::CONFLICT
                }
            }
            Self::StaleVersion | Self::SchemaDrift => StatusCode::PRECONDITION_FAILED,
            Self::RouterUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            Self::NoProvider | Self::RouterFailed | Self::ObjectInvalid | Self::Db(_) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        }
    }

    fn code(&self) -> Option<&'static str> {
        Some(match self {
            Self::InvalidAgentId | Self::Validation(_) => "validation_error",
            Self::AgentUnknown => "agent_unknown",
            Self::AgentFeaturesDenied => "agent_features_denied",
            Self::ToolUnknown => "tool_unknown",
            Self::ToolNotWhitelisted | Self::ToolNoLongerAllowed => "tool_not_whitelisted",
            Self::ToolFeaturesDenied => "tool_features_denied",
            Self::MutationBlockedByReadonly => "mutation_blocked_by_readonly",
            Self::MutationBlockedByPolicy => "mutation_blocked_by_policy",
            Self::ReadOnlyAgent => "read_only_agent",
            Self::ExecutionModeNotSupported { .. } => "execution_mode_not_supported",
            Self::RuntimeOverrideDisabled => "runtime_override_disabled",
            Self::ProviderUnknown => "provider_unknown",
            Self::ProviderNotConfigured => "provider_not_configured",
            Self::ProviderNotAllowlisted => "provider_not_allowlisted",
            Self::ModelNotAllowlisted => "model_not_allowlisted",
            Self::BaseUrlNotAllowlisted => "baseurl_not_allowlisted",
            Self::ProviderNotInEnvAllowlist => "provider_not_in_env_allowlist",
            Self::ModelNotInEnvAllowlist => "model_not_in_env_allowlist",
            Self::AgentRequired => "agent_required",
            Self::LoopRuntimeOverrideDisabled => "loop_runtime_override_disabled",
            Self::InvalidLoopOverride(_) => "invalid_loop_override",
            Self::EscalationNotAllowed { .. } => "escalation_not_allowed",
            Self::ReservedKey(_) => "reserved_key",
            Self::NoProvider | Self::RouterFailed | Self::ObjectInvalid => "internal_error",
            Self::RouterUnavailable => "no_provider",
            Self::QuestionNotFound => "question_not_found",
            Self::PendingActionNotFound => "pending_action_not_found",
            Self::InvalidStatus => "invalid_status",
            Self::Expired => "expired",
            Self::StaleVersion => "stale_version",
            Self::SchemaDrift => "schema_drift",
            Self::ConversationNotFound => "conversation_not_found",
            Self::ParticipantNotFound => "participant_not_found",
            Self::SelfShare => "self_share_not_allowed",
            Self::UserNotFound => "user_not_found",
            Self::DuplicateParticipant => "duplicate_participant",
            Self::ModerationBlocked => "moderation_blocked",
            Self::SessionNotFound => "session_not_found",
            Self::TenantRequired => "tenant_required",
            Self::OrganizationNotFound => "organization_not_found",
            Self::Forbidden => "forbidden",
            Self::Db(_) => return None,
        })
    }
}

impl From<AiError> for AppError {
    fn from(err: AiError) -> Self {
        match err {
            AiError::Db(db) => db.into(),
            AiError::Validation(ref message) | AiError::InvalidLoopOverride(ref message) => {
                let code = err.code().unwrap_or("validation_error");
                AppError::new(err.status(), message.clone()).with_code(code)
            }
            AiError::EscalationNotAllowed {
                declared,
                ref requested,
            } => {
                let requested = requested.clone();
                AppError::from_api(err)
                    .with_field("codeDeclared", declared)
                    .with_field("requested", requested)
            }
            AiError::ReservedKey(ref keys) => {
                let keys = keys.clone();
                AppError::from_api(err).with_field("reservedKeys", keys)
            }
            other => AppError::from_api(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_errors_carry_status_and_code() {
        for (err, status, code) in [
            (AiError::Expired, 409, "expired"),
            (AiError::StaleVersion, 412, "stale_version"),
            (
                AiError::ExecutionModeNotSupported { object_route: true },
                422,
                "execution_mode_not_supported",
            ),
            (
                AiError::ExecutionModeNotSupported {
                    object_route: false,
                },
                409,
                "execution_mode_not_supported",
            ),
            (
                AiError::BaseUrlNotAllowlisted,
                400,
                "baseurl_not_allowlisted",
            ),
            (AiError::NoProvider, 500, "internal_error"),
        ] {
            let app: AppError = err.into();
            assert_eq!(app.status().as_u16(), status);
            assert_eq!(app.code(), Some(code));
        }
        let app: AppError = AiError::ReservedKey(vec!["readOnly".into()]).into();
        assert_eq!(app.body()["reservedKeys"][0], "readOnly");
        assert_eq!(app.body()["code"], "reserved_key");
    }
}
