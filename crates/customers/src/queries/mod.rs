//! The module's SQL: single-record reads and writes here, the deal list in
//! [`deal_list`].

/// The by-id statements every customers table has, written once: `lock`
/// (the record `id` of any tenant, `FOR UPDATE` until the transaction ends:
/// every writer locks the record first), `find` (the record `id` of
/// `tenant`, no lock: reads), `upsert` (inserts the state, or overwrites
/// every column of it, and returns the row; `$write` is the table's
/// `Insertable` built from the state) and `delete` (for good). With a
/// trailing `; for_share`, `find` reads the record `FOR SHARE`.
macro_rules! record_statements {
    ($table:ident, $row:ty, $state:ty, $write:expr $(; $find_lock:ident)?) => {
        pub async fn lock(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<Option<$row>> {
            $table::table
                .find(id)
                .select(<$row>::as_select())
                .for_update()
                .first(conn)
                .await
                .optional()
        }

        pub async fn find(
            conn: &mut AsyncPgConnection,
            tenant: Uuid,
            id: Uuid,
        ) -> QueryResult<Option<$row>> {
            $table::table
                .find(id)
                .filter($table::tenant_id.eq(tenant))
                .select(<$row>::as_select())
                $(.$find_lock())?
                .first(conn)
                .await
                .optional()
        }

        pub async fn upsert(conn: &mut AsyncPgConnection, state: &$state) -> QueryResult<$row> {
            let row = $write(state);
            diesel::insert_into($table::table)
                .values(&row)
                .on_conflict($table::id)
                .do_update()
                .set(&row)
                .returning(<$row>::as_returning())
                .get_result(conn)
                .await
        }

        pub async fn delete(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<usize> {
            diesel::delete($table::table.find(id)).execute(conn).await
        }
    };
}

/// The records of `tenant` in the visible organizations (`None`: all) of
/// `$table`, as a boxed query to filter further.
macro_rules! visible_records {
    ($table:ident, $tenant:expr, $visible:expr) => {{
        let mut query = $table::table
            .filter($table::tenant_id.eq($tenant))
            .into_boxed();
        if let Some(orgs) = $visible {
            query = query.filter($table::organization_id.eq_any(orgs.to_vec()));
        }
        query
    }};
}

/// The read model of the pipeline and stage lists: every write to either
/// table bumps its tenant's version (migration
/// `customers_pipelines_read_version`).
pub const PIPELINES_READ_DEPS: &[&str] = &["customers.pipelines"];

pub mod deal_bulk;
pub mod deal_list;
pub mod deals;
pub mod pipelines;
pub mod stages;
