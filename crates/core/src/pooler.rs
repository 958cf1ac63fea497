//! Which connection poolers stoa can run behind, checked at start-up.
//!
//! stoa keeps two things in a connection's session: the role it acts as
//! (`SET ROLE stoa_app` / `stoa_bypass`, once per connection) and the
//! tenant of row-level security (`set_config('stoa.tenant_id', .., false)`,
//! set when a connection changes hands inside the process). Many of its
//! statements also run outside an explicit transaction, and tokio-postgres
//! (under diesel-async) always prepares named statements, whose Parse and
//! Bind are separate round trips. Behind PgBouncer:
//!
//! - **session mode** keeps one server connection per client connection for
//!   its whole life: everything above holds; supported.
//! - **transaction mode** hands a server connection to another client after
//!   every transaction: the session role and tenant would reach whichever
//!   client runs next on that server connection (a leak across tenants),
//!   and a statement's Parse and Bind could land on two server connections.
//!   Not supported; refused.
//! - **statement mode** refuses multi-statement transactions, which every
//!   write needs. Refused.
//!
//! [`check`] probes the server behind `DATABASE_URL` with two client
//! connections and refuses the last two with a message naming the mode.

use diesel::sql_types::{Nullable, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};

/// Why stoa will not run on this database URL.
#[derive(Debug, thiserror::Error)]
pub enum PoolerError {
    #[error(
        "DATABASE_URL leads to a pooler in statement mode (a transaction block was refused: \
         {0}); stoa writes in multi-statement transactions. Use PgBouncer with \
         pool_mode = session, or connect to Postgres directly (docs/operations.md, \
         \"Connection pooling\")"
    )]
    Statement(String),
    #[error(
        "DATABASE_URL leads to a pooler in transaction mode: a session setting made on one \
         client connection {0}. stoa keeps its row-level security role and tenant in \
         session settings, which transaction pooling hands to other clients. Use PgBouncer \
         with pool_mode = session, or connect to Postgres directly (docs/operations.md, \
         \"Connection pooling\")"
    )]
    Transaction(&'static str),
    #[error("database unavailable while checking for a pooler: {0}")]
    Unavailable(String),
}

#[derive(diesel::QueryableByName)]
struct Probe {
    #[diesel(sql_type = Nullable<Text>)]
    value: Option<String>,
}

/// The probe's setting as this connection sees it, read inside a
/// transaction (so that behind any pooler it runs on one server connection).
async fn read(conn: &mut AsyncPgConnection) -> Result<Option<String>, diesel::result::Error> {
    diesel::sql_query("SELECT current_setting('stoa.pooler_probe', true) AS value")
        .get_result::<Probe>(conn)
        .await
        .map(|p| p.value.filter(|v| !v.is_empty()))
}

/// Refuses a transaction- or statement-mode pooler in front of `url`.
///
/// Client A sets a session value; client B opens a transaction (PgBouncer
/// hands it the server connection released last, A's, when transactions
/// are pooled) and reads it; A, while B holds that connection, reads its
/// own value back. Direct and session-pooled connections see exactly their
/// own value every time.
pub async fn check(url: &str) -> Result<(), PoolerError> {
    let unavailable = |e: &dyn std::fmt::Display| PoolerError::Unavailable(e.to_string());
    let mut a = AsyncPgConnection::establish(url)
        .await
        .map_err(|e| unavailable(&e))?;
    let mut b = AsyncPgConnection::establish(url)
        .await
        .map_err(|e| unavailable(&e))?;
    let mark = uuid::Uuid::new_v4().to_string();
    a.batch_execute(&format!(
        "SELECT set_config('stoa.pooler_probe', '{mark}', false)"
    ))
    .await
    .map_err(|e| unavailable(&e))?;
    b.batch_execute("BEGIN")
        .await
        .map_err(|e| PoolerError::Statement(e.to_string()))?;
    let seen_by_b = read(&mut b)
        .await
        .map_err(|e| PoolerError::Statement(e.to_string()))?;
    let seen_by_a = async {
        a.batch_execute("BEGIN").await?;
        let v = read(&mut a).await?;
        a.batch_execute("COMMIT").await?;
        Ok::<_, diesel::result::Error>(v)
    }
    .await
    .map_err(|e| PoolerError::Statement(e.to_string()))?;
    let _ = b.batch_execute("ROLLBACK").await;
    if seen_by_b.as_deref() == Some(mark.as_str()) {
        return Err(PoolerError::Transaction(
            "was seen by another client connection",
        ));
    }
    if seen_by_a.as_deref() != Some(mark.as_str()) {
        return Err(PoolerError::Transaction("was gone at its next transaction"));
    }
    Ok(())
}
