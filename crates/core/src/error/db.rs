//! How database failures become API errors: conflicts for racing writes,
//! 404 for a missing row, 503 when the database is down, 500 otherwise (the
//! database text is logged, never sent).

use super::AppError;

impl From<diesel::result::Error> for AppError {
    fn from(err: diesel::result::Error) -> Self {
        use diesel::result::{DatabaseErrorKind, Error};
        match err {
            Error::NotFound => Self::not_found("Not found"),
            // Two requests racing for the same unique value: the loser gets a
            // conflict, never a 500.
            Error::DatabaseError(DatabaseErrorKind::UniqueViolation, _) => {
                Self::conflict("A record with these values already exists")
            }
            Error::DatabaseError(DatabaseErrorKind::ForeignKeyViolation, _) => {
                Self::conflict("The record is referenced by, or refers to, a missing record")
            }
            Error::DatabaseError(DatabaseErrorKind::SerializationFailure, _) => {
                Self::conflict("Concurrent update, please retry")
            }
            // The connection died under the query (Postgres restarted or
            // crashed, the network dropped): the database is unavailable, not
            // the request wrong. The pool discards the connection; the client
            // may retry (`cargo xtask faults` crashes Postgres under load).
            Error::DatabaseError(
                DatabaseErrorKind::UnableToSendCommand | DatabaseErrorKind::ClosedConnection,
                info,
            ) => {
                tracing::warn!(db.error = %info.message(), "database connection lost");
                Self::service_unavailable("Database unavailable")
            }
            // The server ended the session (its postmaster died, it shuts
            // down, restarts or is recovering: SQLSTATE class 57, which
            // diesel reports as `Unknown` with the message only), or the
            // node no longer takes writes (a primary demoted by a failover):
            // unavailable too, not a bug (`cargo xtask failover` kills the
            // primary under load).
            Error::DatabaseError(DatabaseErrorKind::Unknown, info)
                if server_went_away(info.message()) =>
            {
                tracing::warn!(db.error = %info.message(), "database connection lost");
                Self::service_unavailable("Database unavailable")
            }
            Error::DatabaseError(DatabaseErrorKind::ReadOnlyTransaction, info) => {
                tracing::warn!(db.error = %info.message(), "database read-only (not the primary)");
                Self::service_unavailable("Database unavailable")
            }
            other => Self::internal(format!("database: {other}")),
        }
    }
}

/// The messages of SQLSTATE 57P01 (`admin_shutdown`: a fast shutdown, or
/// the postmaster's death), 57P02 (`crash_shutdown`) and 57P03
/// (`cannot_connect_now`), as Postgres sends them with `lc_messages` in
/// English (the default of a server started without a locale).
fn server_went_away(message: &str) -> bool {
    const GONE: [&str; 5] = [
        "terminating connection due to unexpected postmaster exit",
        "terminating connection due to administrator command",
        "terminating connection because of crash of another server process",
        "the database system is shutting down",
        "the database system is starting up",
    ];
    GONE.iter().any(|gone| message.starts_with(gone))
}

impl From<crate::db::DbError> for AppError {
    fn from(err: crate::db::DbError) -> Self {
        match err {
            crate::db::DbError::Unavailable(reason) => {
                tracing::warn!(db.error = %reason, "database unavailable");
                Self::service_unavailable("Database unavailable")
            }
            crate::db::DbError::Query(err) => err.into(),
            crate::db::DbError::Migration(msg) => Self::internal(msg),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::tests::render;
    use actix_web::http::StatusCode;

    #[test]
    fn unique_and_foreign_key_violations_are_conflicts() {
        use diesel::result::{DatabaseErrorInformation, DatabaseErrorKind, Error};
        struct Info;
        impl DatabaseErrorInformation for Info {
            fn message(&self) -> &str {
                "duplicate key value violates unique constraint \"secret_index\""
            }
            fn details(&self) -> Option<&str> {
                None
            }
            fn hint(&self) -> Option<&str> {
                None
            }
            fn table_name(&self) -> Option<&str> {
                None
            }
            fn column_name(&self) -> Option<&str> {
                None
            }
            fn constraint_name(&self) -> Option<&str> {
                None
            }
            fn statement_position(&self) -> Option<i32> {
                None
            }
        }
        for kind in [
            DatabaseErrorKind::UniqueViolation,
            DatabaseErrorKind::ForeignKeyViolation,
        ] {
            let err = AppError::from(Error::DatabaseError(kind, Box::new(Info)));
            let (status, body, _) = render(&err);
            assert_eq!(status, 409);
            assert!(!body.to_string().contains("secret_index"), "{body}");
        }
    }

    #[test]
    fn a_lost_connection_is_503() {
        use diesel::result::{DatabaseErrorKind, Error};
        for kind in [
            DatabaseErrorKind::UnableToSendCommand,
            DatabaseErrorKind::ClosedConnection,
        ] {
            let err = AppError::from(Error::DatabaseError(
                kind,
                Box::new(String::from("connection closed")),
            ));
            assert_eq!(err.status(), StatusCode::SERVICE_UNAVAILABLE);
        }
        let ended = AppError::from(Error::DatabaseError(
            DatabaseErrorKind::Unknown,
            Box::new(String::from(
                "terminating connection due to unexpected postmaster exit",
            )),
        ));
        assert_eq!(ended.status(), StatusCode::SERVICE_UNAVAILABLE);
        let demoted = AppError::from(Error::DatabaseError(
            DatabaseErrorKind::ReadOnlyTransaction,
            Box::new(String::from(
                "cannot execute INSERT in a read-only transaction",
            )),
        ));
        assert_eq!(demoted.status(), StatusCode::SERVICE_UNAVAILABLE);
        let other = AppError::from(Error::DatabaseError(
            DatabaseErrorKind::Unknown,
            Box::new(String::from("division by zero")),
        ));
        assert_eq!(other.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }

    #[test]
    fn diesel_not_found_is_404_and_other_errors_are_500() {
        assert_eq!(
            AppError::from(diesel::result::Error::NotFound).status(),
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            AppError::from(diesel::result::Error::BrokenTransactionManager).status(),
            StatusCode::INTERNAL_SERVER_ERROR
        );
    }
}
