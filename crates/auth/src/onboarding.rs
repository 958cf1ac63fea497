//! stoa-auth's side of onboarding ([`stoa_acl::Onboarding`]): the password
//! policy and hashing, e-mail uniqueness across tenants, first users and a
//! session for them, so an onboarding module needs no stoa-auth.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::future::BoxFuture;
use stoa_acl::{FirstUser, IssuedSession, Onboarding};
use stoa_core::AppError;
use uuid::Uuid;

use crate::config::AuthConfig;
use crate::password::{PasswordPolicy, hash_password, verify_password};
use crate::queries::{self, normalize_email, valid_email};
use crate::schema::users;
use crate::tokens::TokenKeys;

/// Onboarding against stoa-auth's tables, with the process's password
/// policy and token keys.
#[derive(Clone)]
pub struct PgOnboarding {
    policy: PasswordPolicy,
    keys: TokenKeys,
    session_ttl: std::time::Duration,
    access_ttl: std::time::Duration,
}

impl PgOnboarding {
    pub fn new(config: &AuthConfig) -> Self {
        Self {
            policy: config.password_policy.clone(),
            keys: TokenKeys::new(config.jwt_secret.expose()),
            session_ttl: config.session_ttl,
            access_ttl: config.access_ttl,
        }
    }
}

impl Onboarding for PgOnboarding {
    fn check_password(&self, password: &str) -> Result<(), String> {
        self.policy.check(password)
    }

    fn hash_password<'a>(&'a self, password: &'a str) -> BoxFuture<'a, Result<String, AppError>> {
        Box::pin(async move {
            self.policy
                .check(password)
                .map_err(|m| AppError::bad_request(m).with_code("weak_password"))?;
            hash_password(password.to_string()).await
        })
    }

    fn verify_password<'a>(
        &'a self,
        password: &'a str,
        hash: &'a str,
    ) -> BoxFuture<'a, Result<bool, AppError>> {
        Box::pin(verify_password(
            password.to_string(),
            Some(hash.to_string()),
        ))
    }

    fn email_taken<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        email: &'a str,
    ) -> BoxFuture<'a, Result<bool, AppError>> {
        Box::pin(async move {
            let email = normalize_email(email);
            let taken = diesel::select(diesel::dsl::exists(
                users::table
                    .filter(users::email.eq(&email))
                    .filter(users::deleted_at.is_null()),
            ))
            .get_result::<bool>(conn)
            .await?;
            Ok(taken)
        })
    }

    fn first_user(
        &self,
        email: &str,
        password_hash: Option<String>,
        role: &'static str,
    ) -> Result<FirstUser, AppError> {
        let email = normalize_email(email);
        if !valid_email(&email) {
            return Err(AppError::bad_request("Invalid e-mail address").with_code("invalid_email"));
        }
        if !crate::bootstrap::DEFAULT_ROLES.contains(&role) {
            return Err(AppError::internal("a first user names an unknown role"));
        }
        Ok(FirstUser {
            id: Uuid::new_v4(),
            email,
            password_hash,
            role,
            name: None,
        })
    }

    fn issue_session<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        user_id: Uuid,
    ) -> BoxFuture<'a, Result<IssuedSession, AppError>> {
        Box::pin(async move {
            let user = queries::user_by_id(conn, user_id)
                .await?
                .filter(|u| u.is_active)
                .ok_or_else(|| AppError::not_found("User not found"))?;
            let roles = queries::role_names(conn, &user).await?;
            queries::touch_login(conn, user.id).await?;
            let (sid, session_token, _) =
                queries::create_session(conn, user.id, false, self.session_ttl).await?;
            let access_token = self
                .keys
                .sign(&queries::claims_for(&user, sid, roles, self.access_ttl))
                .map_err(AppError::internal)?;
            Ok(IssuedSession {
                user_id: user.id,
                access_token,
                session_token,
            })
        })
    }
}
