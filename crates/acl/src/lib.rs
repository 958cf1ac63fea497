//! stoa-acl: feature-based access control.
//!
//! Features are strings `module.action` (`devices.manage`, `auth.sidebar.manage`).
//! Grants may use wildcards: `*` grants everything and `module.*` grants `module`
//! itself and every `module.<anything>`. Every module registers the features it
//! checks in the [`Registry`], which serves the feature catalog and validates ACL
//! edits. [`AuthContext`] is the extractor handlers use to learn who calls and
//! what they may do ([`OptionalAuth`] on routes anonymous clients may call
//! too); the [`Authenticator`] behind it is provided by stoa-auth.
//! Modules also declare who may call each of their operations
//! ([`Registry::register_operations`]); the [`AccessMatrix`] enforces those
//! declarations before every handler and writes them into the OpenAPI document.
//! Modules reach users, roles and ACL resolution through the narrow traits of
//! [`accounts`] (implemented by stoa-auth, handed over by the server), reach
//! tenants and organizations through [`organizations`] (implemented by
//! stoa-directory) and check
//! what a caller may hand out with [`grants`]. Reads of users' personal data
//! are logged with [`read_log`].
#![doc = include_str!("../README.md")]

pub mod accounts;
mod builder;
mod context;
pub mod delegation;
pub mod grants;
mod kept;
pub mod keys;
mod matching;
mod matrix;
mod optional;
pub mod organizations;
pub mod platform;
pub mod provision;
pub mod read_log;
mod registry;
pub mod resource;
mod scope;
pub mod services;
pub mod slots;

pub use accounts::{
    Accounts, AclResolver, Creator, CreatorGone, CreatorResolver, IssuedSession, Onboarding,
    RoleDirectory, UserDirectory, UserRef,
};
pub use context::{
    ALL_ORGANIZATIONS, API_KEY_PREFIX, AUTH_COOKIE, AuthContext, Authenticator, AuthenticatorData,
    BUSINESS_RULE_SOURCE, CredentialKind, Credentials, ResolvedAcl, SELECTED_ORG_COOKIE,
    SELECTED_ORG_HEADER, SELECTED_TENANT_COOKIE, SELECTED_TENANT_HEADER, SESSION_COOKIE,
    authenticator_data, looks_like_api_key,
};
pub use kept::Kept;
pub use keys::{KeyDirectory, KeyRef};
pub use matching::{feature_granted, features_granted};
pub use matrix::AccessMatrix;
pub use optional::OptionalAuth;
pub use organizations::OrganizationDirectory;
pub use platform::{PlatformAnswer, PlatformCall, PlatformCaller, PlatformSlot};
pub use provision::{FirstUser, NewTenant, TenantSeeder, seed_tenant};
pub use registry::{Feature, ModuleInfo, NavEntry, NavPlacement, Registry, RegistryError};
pub use scope::{Reach, Scope, foreign_tenant, out_of_scope};
pub use services::Services;
pub use slots::{
    AiTool, AnalyticsField, AnalyticsSource, DemoData, DemoScope, DemoSeeder, FieldKind,
    FieldWrite, FieldWriter, OrganizationColumn, RecordChecker, RecordTarget, RuleEntity,
    RuleField, RuleFieldKind, RuleWriter, ToolCall, ToolHandler, ToolKind, WidgetDef, WidgetSize,
};
