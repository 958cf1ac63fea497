//! The rate-limit layers of the session endpoints: which keys count, with
//! which rule. Why each exists is in the README ("Login and account limits").

use stoa_core::rate_limit::Layers;
use uuid::Uuid;

use crate::state::AuthState;

fn layers(state: &AuthState) -> Layers<'_> {
    Layers::new(&*state.limiter)
}

fn login_keys(ip: &str, email: &str) -> [String; 3] {
    [
        format!("login:account-ip:{email}|{ip}"),
        format!("login:ip:{ip}"),
        format!("login:account:{email}"),
    ]
}

/// A login attempt: per (account, address) — the lock-out a stranger can
/// cause reaches only their own address —, per address, and per account
/// across all addresses (the backstop against distributed guessing).
pub fn login<'a>(state: &'a AuthState, ip: &str, email: &str) -> Layers<'a> {
    let rules = &state.config.rate_limits;
    let [pair, by_ip, account] = login_keys(ip, email);
    layers(state)
        .layer(pair, rules.login_account_ip)
        .layer(by_ip, rules.login_ip)
        .layer(account, rules.login_account)
}

/// The password was right: the attempt does not count. The (account,
/// address) counter starts over, the address and the backstop get their slot
/// back (failures of others stay counted).
pub fn login_succeeded(state: &AuthState, ip: &str, email: &str) {
    let rules = &state.config.rate_limits;
    let [pair, by_ip, account] = login_keys(ip, email);
    state.limiter.reset(&pair);
    state.limiter.release(&by_ip, &rules.login_ip);
    state.limiter.release(&account, &rules.login_account);
}

/// Only the address layer, for a login form that could not be read.
pub fn login_address<'a>(state: &'a AuthState, ip: &str) -> Layers<'a> {
    layers(state).layer(format!("login:ip:{ip}"), state.config.rate_limits.login_ip)
}

/// Checks of the current password in `PUT /auth/profile`, per user.
pub fn current_password(state: &AuthState, user: Uuid) -> Layers<'_> {
    layers(state).layer(
        format!("profile:password:{user}"),
        state.config.rate_limits.profile_password,
    )
}

/// Invitation resends, per invited user (not per administrator).
pub fn resend_invite(state: &AuthState, user: Option<Uuid>) -> Layers<'_> {
    let key = match user {
        Some(user) => format!("resend-invite:user:{user}"),
        None => "resend-invite:user:-".to_string(),
    };
    layers(state).layer(key, state.config.rate_limits.resend_invite_user)
}
