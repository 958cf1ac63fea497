//! The table's shape: every scope and foreign-key column leads an index, and
//! one live row per (tenant, organization, user, device id).

use diesel::prelude::*;
use diesel_async::RunQueryDsl;

use super::support::*;

#[derive(QueryableByName)]
struct Leading {
    #[diesel(sql_type = diesel::sql_types::Text)]
    column: String,
}

#[actix_web::test]
async fn scope_and_foreign_key_columns_are_indexed() {
    let app = start().await;
    let mut conn = app.db.conn().await.unwrap();
    let leading: Vec<String> = diesel::sql_query(
        "SELECT a.attname::text AS column
         FROM pg_index i
         JOIN pg_class c ON c.oid = i.indrelid
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
         WHERE c.relname = 'user_devices'",
    )
    .load::<Leading>(&mut *conn)
    .await
    .unwrap()
    .into_iter()
    .map(|l| l.column)
    .collect();
    for column in ["id", "tenant_id", "organization_id", "user_id"] {
        assert!(
            leading.iter().any(|c| c == column),
            "no index leads with {column}: {leading:?}"
        );
    }
}

#[actix_web::test]
async fn one_live_row_per_device_key_including_a_null_organization() {
    use stoa_devices::schema::user_devices::dsl as d;
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let mut conn = app.db.conn().await.unwrap();
    let insert = |org: Option<uuid::Uuid>| {
        diesel::insert_into(d::user_devices).values((
            d::tenant_id.eq(acme.tenant_id),
            d::organization_id.eq(org),
            d::user_id.eq(acme.employee),
            d::device_id.eq("phone"),
            d::platform.eq("ios"),
        ))
    };
    for org in [None, Some(acme.organization_id)] {
        insert(org).execute(&mut *conn).await.unwrap();
        let twin = insert(org).execute(&mut *conn).await;
        assert!(
            matches!(
                twin,
                Err(diesel::result::Error::DatabaseError(
                    diesel::result::DatabaseErrorKind::UniqueViolation,
                    _
                ))
            ),
            "{org:?}: {twin:?}"
        );
    }
    // Deactivated rows do not count.
    diesel::update(d::user_devices)
        .set(d::deleted_at.eq(Some(time::OffsetDateTime::now_utc())))
        .execute(&mut *conn)
        .await
        .unwrap();
    insert(None).execute(&mut *conn).await.unwrap();
    let bad_platform = diesel::insert_into(d::user_devices)
        .values((
            d::tenant_id.eq(acme.tenant_id),
            d::user_id.eq(acme.employee),
            d::device_id.eq("x"),
            d::platform.eq("windows"),
        ))
        .execute(&mut *conn)
        .await;
    assert!(bad_platform.is_err(), "the platform is checked");
}
