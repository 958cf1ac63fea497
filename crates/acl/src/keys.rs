//! API keys as other modules see them: the one interface through which a
//! module lists a tenant's keys without reading stoa-api-keys' table.
//!
//! stoa-api-keys owns the keys and implements [`KeyDirectory`]
//! (`stoa_api_keys::PgKeyDirectory`); business rules list the keys a
//! `CALL_OPEN_MERCATO` action may run as through it. A platform mounted
//! without the API-keys module has no keys: [`NoKeys`].

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use stoa_core::AppError;
use uuid::Uuid;

/// A live (not deleted, unexpired) API key, with the names other modules show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRef {
    pub id: Uuid,
    pub name: String,
    /// The key's public prefix (never its secret).
    pub key_prefix: String,
    pub organization_id: Option<Uuid>,
    pub organization_name: Option<String>,
    /// The live roles the key carries, `(id, name)`, by name.
    pub roles: Vec<(Uuid, String)>,
}

/// Lists API keys for other modules; every method takes the caller's
/// connection, so the read joins the transaction the module is in.
pub trait KeyDirectory: Send + Sync + 'static {
    /// The live keys of `tenant`, ordered by name (then id).
    fn live_keys<'a>(
        &'a self,
        conn: &'a mut AsyncPgConnection,
        tenant: Uuid,
    ) -> BoxFuture<'a, Result<Vec<KeyRef>, AppError>>;
}

/// The key directory of a platform without the API-keys module: no keys.
pub struct NoKeys;

impl KeyDirectory for NoKeys {
    fn live_keys<'a>(
        &'a self,
        _conn: &'a mut AsyncPgConnection,
        _tenant: Uuid,
    ) -> BoxFuture<'a, Result<Vec<KeyRef>, AppError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}
