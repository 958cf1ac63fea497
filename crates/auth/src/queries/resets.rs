//! Reset and invitation tokens, and the one-statement reset request.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use super::normalize_email;
use crate::schema::password_resets;
use crate::tokens::{random_token, token_hash};

/// What a reset request stores: the token's hash and the message, whose
/// recipient is filled in by the database.
pub struct ResetRequest<'a> {
    pub email: &'a str,
    pub token_hash: &'a str,
    pub expires_at: OffsetDateTime,
    pub subject: &'a str,
    pub body: &'a str,
    /// Also store the message in `mail_outbox` (the outbox mailer's delivery).
    pub store_mail: bool,
}

#[derive(QueryableByName)]
struct Recipient {
    #[diesel(sql_type = diesel::sql_types::Text)]
    email: String,
}

/// One statement, whether or not the account exists: finds the first live,
/// active user with the e-mail (any tenant, oldest first), stores a reset token
/// for them and, with `store_mail`, the message in `mail_outbox` (through
/// stoa-mail's [`stoa_mail::store_select_sql`]). Returns the
/// recipient when there was one.
pub async fn store_reset_request(
    conn: &mut AsyncPgConnection,
    request: &ResetRequest<'_>,
) -> QueryResult<Option<String>> {
    use diesel::sql_types::{Bool, Text, Timestamptz};
    // The message's INSERT is stoa-mail's (it owns `mail_outbox`).
    let store_mail = stoa_mail::store_select_sql("email", "$4", "$5", "target", "$6");
    let found: Vec<Recipient> = diesel::sql_query(format!(
        "WITH target AS ( \
             SELECT id, email FROM users \
             WHERE email = $1 AND deleted_at IS NULL AND is_active \
             ORDER BY created_at, id LIMIT 1 \
         ), token AS ( \
             INSERT INTO password_resets (user_id, token_hash, kind, expires_at) \
             SELECT id, $2, 'reset', $3 FROM target RETURNING user_id \
         ), mail AS ({store_mail} RETURNING id) \
         SELECT email FROM target",
    ))
    .bind::<Text, _>(normalize_email(request.email))
    .bind::<Text, _>(request.token_hash)
    .bind::<Timestamptz, _>(request.expires_at)
    .bind::<Text, _>(request.subject)
    .bind::<Text, _>(request.body)
    .bind::<Bool, _>(request.store_mail)
    .load(conn)
    .await?;
    Ok(found.into_iter().next().map(|r| r.email))
}

/// A new reset (or invite) token; returns the raw token.
pub async fn create_reset_token(
    conn: &mut AsyncPgConnection,
    user: Uuid,
    kind: &str,
    ttl: std::time::Duration,
) -> QueryResult<String> {
    let raw = random_token();
    diesel::insert_into(password_resets::table)
        .values((
            password_resets::user_id.eq(user),
            password_resets::token_hash.eq(token_hash(&raw)),
            password_resets::kind.eq(kind),
            password_resets::expires_at.eq(OffsetDateTime::now_utc() + ttl),
        ))
        .execute(conn)
        .await?;
    Ok(raw)
}

/// Marks a reset token used (atomically: one winner) and returns its user.
pub async fn consume_reset_token(
    conn: &mut AsyncPgConnection,
    raw: &str,
) -> QueryResult<Option<Uuid>> {
    let now = OffsetDateTime::now_utc();
    diesel::update(
        password_resets::table
            .filter(password_resets::token_hash.eq(token_hash(raw)))
            .filter(password_resets::used_at.is_null())
            .filter(password_resets::expires_at.gt(now)),
    )
    .set(password_resets::used_at.eq(now))
    .returning(password_resets::user_id)
    .get_result(conn)
    .await
    .optional()
}
