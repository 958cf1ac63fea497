use diesel_async::RunQueryDsl;
use serde_json::json;

use super::support::*;

const ACTIONS: &str = "/api/audit_logs/audit-logs/actions";

#[actix_web::test]
async fn filters_sorting_and_paging() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let (sales, _) = create_org(
        &app,
        &admin,
        json!({"name": "Sales", "parentId": acme.organization_id}),
    )
    .await;
    let (emea, _) = create_org(&app, &admin, json!({"name": "EMEA", "parentId": sales})).await;
    app.send(put_json(
        "/api/directory/organizations",
        &admin,
        json!({"id": sales, "name": "Sales 2"}),
    ))
    .await;
    app.send(put_json(
        "/api/directory/organizations",
        &admin,
        json!({"id": emea, "isActive": false}),
    ))
    .await;
    app.send(delete(
        &format!("/api/directory/organizations?id={emea}"),
        &admin,
    ))
    .await;

    let list = |q: &str| get(&format!("{ACTIONS}{q}"), &admin);
    let res = app.send(list("")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(
        (
            body["total"].clone(),
            body["page"].clone(),
            body["pageSize"].clone()
        ),
        (json!(5), json!(1), json!(50))
    );
    assert_eq!(body["canViewTenant"], true);
    let first = &body["items"][0];
    assert_eq!(first["commandId"], "directory.organizations.delete");
    assert_eq!(first["actorUserName"], "admin@acme.com");
    assert_eq!(first["tenantName"], "Acme Corp");
    assert_eq!(first["organizationName"], "Acme Corp");
    assert!(first["undoToken"].is_string());

    let count = |res: stoa_testkit::TestResponse| res.json()["total"].as_u64().unwrap();
    assert_eq!(count(app.send(list("?actionType=create")).await), 2);
    assert_eq!(
        count(app.send(list("?actionType=edit,delete,bogus")).await),
        3
    );
    assert_eq!(
        count(
            app.send(list(&format!(
                "?resourceKind=directory.organization&resourceId={sales}"
            )))
            .await
        ),
        2
    );
    assert_eq!(
        count(
            app.send(list(&format!(
                "?resourceKind=directory.organization&resourceId={sales}&includeRelated=true"
            )))
            .await
        ),
        5,
        "EMEA's entries name Sales as their parent"
    );
    assert_eq!(count(app.send(list("?fieldName=name")).await), 1);
    assert_eq!(count(app.send(list("?fieldName=isActive,name")).await), 2);
    assert_eq!(count(app.send(list("?undoableOnly=true")).await), 5);
    assert_eq!(
        count(
            app.send(list("?after=2000-01-01T00:00:00Z&before=2100-01-01"))
                .await
        ),
        5
    );
    assert_eq!(
        count(app.send(list("?before=2000-01-01T00:00:00Z")).await),
        0
    );

    let res = app
        .send(list("?sortField=createdAt&sortDir=asc&pageSize=2&page=2"))
        .await;
    let body = res.json();
    assert_eq!(body["items"].as_array().unwrap().len(), 2);
    assert_eq!(
        body["items"][0]["commandId"],
        "directory.organizations.update"
    );
    assert_eq!(body["totalPages"], 3);
    let res = app.send(list("?limit=2&offset=4")).await;
    assert_eq!(res.json()["items"].as_array().unwrap().len(), 1);
    let res = app.send(list("?includeTotal=false&pageSize=2")).await;
    assert_eq!(res.json()["items"].as_array().unwrap().len(), 2);
    for sort in ["user", "action", "field", "source"] {
        assert_eq!(
            app.send(list(&format!("?sortField={sort}&sortDir=asc")))
                .await
                .status,
            200,
            "{sort}"
        );
    }
    for bad in [
        "?pageSize=201",
        "?pageSize=0",
        "?limit=1001",
        "?page=0",
        "?sortField=evil",
        "?sortDir=up",
        "?before=yesterday",
        "?actorUserId=nope",
        "?organizationId=x",
    ] {
        assert_eq!(app.send(list(bad)).await.status, 400, "{bad}");
    }
    assert_eq!(app.send(list("?pageSize=200")).await.status, 200);
    assert_eq!(app.send(list("?limit=1000")).await.status, 200);
}

#[actix_web::test]
async fn own_entries_unless_tenant_viewer_and_tenants_are_isolated() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let mover = user_with_features(
        &app.db,
        &acme,
        "m@acme.com",
        &["directory.organizations.*", "audit_logs.view_self"],
        None,
        None,
    )
    .await;
    let mover_token = token_for(&app.db, mover).await;
    create_org(
        &app,
        &admin,
        json!({"name": "By admin", "parentId": acme.organization_id}),
    )
    .await;
    create_org(
        &app,
        &mover_token,
        json!({"name": "By mover", "parentId": acme.organization_id}),
    )
    .await;

    let res = app.send(get(ACTIONS, &mover_token)).await;
    let body = res.json();
    assert_eq!(body["canViewTenant"], false);
    assert_eq!(body["total"], 1);
    assert_eq!(body["items"][0]["actorUserId"], mover.to_string());
    // actorUserId is ignored without audit_logs.view_tenant.
    let res = app
        .send(get(
            &format!("{ACTIONS}?actorUserId={}", acme.admin),
            &mover_token,
        ))
        .await;
    assert_eq!(res.json()["total"], 1);
    assert_eq!(res.json()["items"][0]["actorUserId"], mover.to_string());

    let res = app.send(get(ACTIONS, &admin)).await;
    assert_eq!(res.json()["total"], 2);
    let res = app
        .send(get(
            &format!("{ACTIONS}?actorUserId={mover},{}", acme.admin),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["total"], 2);
    let res = app
        .send(get(&format!("{ACTIONS}?actorUserId={mover}"), &admin))
        .await;
    assert_eq!(res.json()["total"], 1);

    let other = token_for(&app.db, globex.admin).await;
    let res = app.send(get(ACTIONS, &other)).await;
    assert_eq!(res.json()["total"], 0);
    let res = app
        .send(get(
            &format!("{ACTIONS}?actorUserId={}", acme.admin),
            &other,
        ))
        .await;
    assert_eq!(res.json()["total"], 0);

    let employee = token_for(&app.db, acme.employee).await;
    assert_eq!(app.send(get(ACTIONS, &employee)).await.json()["total"], 0);
    let none = user_with_features(&app.db, &acme, "x@acme.com", &[], None, None).await;
    let none = token_for(&app.db, none).await;
    let res = app.send(get(ACTIONS, &none)).await;
    assert_eq!(res.status, 403);
    assert_eq!(
        res.json()["requiredFeatures"],
        json!(["audit_logs.view_self"])
    );
    assert_eq!(app.get(ACTIONS).await.status, 401);
}

#[actix_web::test]
async fn callers_without_a_tenant_are_forbidden() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let floating =
        user_with_features(&app.db, &acme, "f@acme.com", &["audit_logs.*"], None, None).await;
    let mut conn = app.db.conn().await.unwrap();
    // A user whose tenant is gone from its record (no tenant scope at all).
    diesel::sql_query(format!(
        "UPDATE users SET tenant_id = NULL, organization_id = NULL WHERE id = '{floating}'"
    ))
    .execute(&mut *conn)
    .await
    .unwrap();
    let token = token_for(&app.db, floating).await;
    let res = app.send(get(ACTIONS, &token)).await;
    assert_eq!(res.status, 403, "{}", res.text());
    let res = app
        .send(get("/api/audit_logs/audit-logs/access", &token))
        .await;
    assert_eq!(res.status, 403);
}

#[actix_web::test]
async fn access_logs_list_the_callers_reads() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let employee = token_for(&app.db, acme.employee).await;
    let mut conn = app.db.conn().await.unwrap();
    for (actor, kind, access) in [
        (acme.admin, "auth.user", "read:list"),
        (acme.admin, "auth.user", "read:item"),
        (acme.admin, "auth.role", "read:list"),
        (acme.employee, "auth.user", "read:item"),
    ] {
        diesel::sql_query(format!(
            "INSERT INTO access_reads (tenant_id, organization_id, actor_user_id, resource_kind, resource_ids, entry_ids, access_type, fields) \
             VALUES ('{}', '{}', '{actor}', '{kind}', ARRAY['{}'], ARRAY[gen_random_uuid()], '{access}', ARRAY['email','name'])",
            acme.tenant_id,
            acme.organization_id,
            uuid::Uuid::new_v4()
        ))
        .execute(&mut *conn)
        .await
        .unwrap();
    }
    let path = "/api/audit_logs/audit-logs/access";
    let res = app.send(get(path, &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["total"], 3, "the caller's own reads by default");
    assert_eq!(body["items"][0]["fields"], json!(["email", "name"]));
    assert_eq!(body["items"][0]["actorUserName"], "admin@acme.com");
    assert_eq!(
        app.send(get(&format!("{path}?resourceKind=auth.user"), &admin))
            .await
            .json()["total"],
        2
    );
    assert_eq!(
        app.send(get(&format!("{path}?accessType=read:item"), &admin))
            .await
            .json()["total"],
        1
    );
    let res = app
        .send(get(
            &format!("{path}?actorUserId={}", acme.employee),
            &admin,
        ))
        .await;
    assert_eq!(res.json()["total"], 1);
    let res = app
        .send(get(&format!("{path}?pageSize=2&page=2"), &admin))
        .await;
    assert_eq!(res.json()["items"].as_array().unwrap().len(), 1);
    assert_eq!(res.json()["totalPages"], 2);
    // Without view_tenant another actor's id is ignored.
    let res = app
        .send(get(
            &format!("{path}?actorUserId={}", acme.admin),
            &employee,
        ))
        .await;
    assert_eq!(res.json()["total"], 1);
    assert_eq!(res.json()["canViewTenant"], false);
    assert_eq!(
        app.send(get(&format!("{path}?pageSize=500"), &admin))
            .await
            .status,
        400
    );
}

#[actix_web::test]
async fn reading_tenants_writes_access_log_entries() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    seed(&app.db, "Globex", "globex.com").await;
    let root = token_for(&app.db, acme.superadmin).await;
    assert_eq!(
        app.send(get("/api/directory/tenants", &root)).await.status,
        200
    );
    let by_id = format!("/api/directory/tenants?id={}", acme.tenant_id);
    let res = app.send(get(&by_id, &root)).await;
    assert_eq!(res.status, 200);
    let res = app
        .send(get(
            "/api/audit_logs/audit-logs/access?resourceKind=directory.tenant",
            &root,
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(
        body["total"], 3,
        "two rows for the list, one for the lookup by id"
    );
    let types: Vec<&str> = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["accessType"].as_str().unwrap())
        .collect();
    assert!(
        types.contains(&"read:list") && types.contains(&"read:item"),
        "{types:?}"
    );
    assert_eq!(body["items"][0]["fields"][1], "name");
}

#[actix_web::test]
async fn the_default_count_looks_a_thousand_entries_ahead() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let mut conn = app.db.conn().await.unwrap();
    diesel::sql_query(format!(
        "INSERT INTO action_logs (tenant_id, organization_id, actor_user_id, command_id, action_type) \
         SELECT '{}', '{}', '{}', 'bulk.items.update', 'edit' FROM generate_series(1, 2500)",
        acme.tenant_id, acme.organization_id, acme.admin
    ))
    .execute(&mut *conn)
    .await
    .unwrap();
    app.send(get(ACTIONS, &admin)).await;
    // Cached caller: session check, then one read transaction on generic
    // plans (BEGIN, plan_cache_mode, COMMIT: three short round trips that
    // save planning the page over every monthly partition, issue 52) with
    // the page, its count and place names, and one batched lookup of the
    // actors' display names.
    let before = stoa_core::db::thread_queries();
    let body = app.send(get(ACTIONS, &admin)).await.json();
    assert_eq!(
        stoa_core::db::thread_queries() - before,
        6,
        "action list statements"
    );
    assert_eq!(body["items"][0]["organizationName"], "Acme Corp");
    assert_eq!(body["items"][0]["tenantName"], "Acme Corp");
    assert_eq!(
        (body["total"].clone(), body["totalCapped"].clone()),
        (json!(1000), json!(true))
    );
    assert_eq!(body["totalPages"], 20);
    let body = app
        .send(get(&format!("{ACTIONS}?page=30&pageSize=50"), &admin))
        .await
        .json();
    assert_eq!(
        (body["total"].clone(), body["totalCapped"].clone()),
        (json!(2450), json!(true)),
        "counted ahead from the window"
    );
    let body = app
        .send(get(&format!("{ACTIONS}?page=40&pageSize=50"), &admin))
        .await
        .json();
    assert_eq!(
        (body["total"].clone(), body["totalCapped"].clone()),
        (json!(2500), json!(false))
    );
    let body = app
        .send(get(&format!("{ACTIONS}?includeTotal=true"), &admin))
        .await
        .json();
    assert_eq!(
        (body["total"].clone(), body["totalCapped"].clone()),
        (json!(2500), json!(false))
    );
    let body = app
        .send(get(&format!("{ACTIONS}?page=60&pageSize=50"), &admin))
        .await
        .json();
    assert_eq!(body["items"].as_array().unwrap().len(), 0);
    assert_eq!(body["total"], 2500, "past the end the exact count answers");
    let res = app
        .send(get(
            &format!("{ACTIONS}?page=2&pageSize=10000&limit=1"),
            &admin,
        ))
        .await;
    assert_eq!(res.status, 400);
}

/// The ids of a page's entries, in order (the callers compare them with the
/// whole log, so an item without an id fails there).
fn entry_ids(body: &serde_json::Value) -> Vec<String> {
    body["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["id"].as_str().map(str::to_owned))
        .collect()
}

#[actix_web::test]
async fn the_access_list_is_a_floor_and_one_statement_with_capped_totals_and_cursors() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let globex = seed(&app.db, "Globex", "globex.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let mut conn = app.db.conn().await.unwrap();
    // Reads one millisecond apart, each of up to three records: the entries
    // of one read share its timestamp (ties go by entry id).
    for (tenant, org, actor, count) in [
        (acme.tenant_id, acme.organization_id, acme.admin, 1100),
        (globex.tenant_id, globex.organization_id, globex.admin, 5),
    ] {
        diesel::sql_query(format!(
            "INSERT INTO access_reads (tenant_id, organization_id, actor_user_id, resource_kind, resource_ids, entry_ids, access_type, created_at) \
             SELECT '{tenant}', '{org}', '{actor}', 'auth.user', array_agg(g::text), \
                    array_agg(gen_random_uuid()), 'read:list', \
                    now() - (g / 3) * interval '1 millisecond' \
             FROM generate_series(1, {count}) g GROUP BY g / 3"
        ))
        .execute(&mut *conn)
        .await
        .unwrap();
    }
    let path = "/api/audit_logs/audit-logs/access";
    app.send(get(path, &admin)).await;
    // Cached caller: session check, the page's floor (a value the page's
    // plan must see, issue 52), the page with its count and place names,
    // one batched lookup of the actors' display names.
    let before = stoa_core::db::thread_queries();
    let res = app.send(get(path, &admin)).await;
    assert_eq!(
        stoa_core::db::thread_queries() - before,
        4,
        "access list statements"
    );
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(
        (body["total"].clone(), body["totalCapped"].clone()),
        (json!(1000), json!(true))
    );
    assert_eq!(body["items"][0]["tenantName"], "Acme Corp");
    assert_eq!(body["items"][0]["organizationName"], "Acme Corp");
    assert_eq!(body["items"][0]["actorUserName"], "admin@acme.com");
    let body = app
        .send(get(&format!("{path}?includeTotal=true"), &admin))
        .await
        .json();
    assert_eq!(
        (body["total"].clone(), body["totalCapped"].clone()),
        (json!(1100), json!(false)),
        "exact, and the other tenant's entries are not counted"
    );
    let body = app
        .send(get(&format!("{path}?includeTotal=false"), &admin))
        .await
        .json();
    assert_eq!(
        (body["total"].clone(), body["totalCapped"].clone()),
        (json!(50), json!(false))
    );

    // Cursors walk the same entries as pages, in the same order.
    let ids = entry_ids;
    let mut by_page = Vec::new();
    for page in 1..=6 {
        let body = app
            .send(get(&format!("{path}?pageSize=200&page={page}"), &admin))
            .await
            .json();
        by_page.extend(ids(&body));
    }
    assert_eq!(by_page.len(), 1100);
    // The newest first, ties by entry id: the order of the whole log.
    #[derive(diesel::QueryableByName)]
    struct Entry {
        #[diesel(sql_type = diesel::sql_types::Uuid)]
        id: uuid::Uuid,
    }
    let all: Vec<Entry> = diesel::sql_query(format!(
        "SELECT id FROM access_logs WHERE actor_user_id = '{}' \
         ORDER BY created_at DESC, id DESC",
        acme.admin
    ))
    .load(&mut *conn)
    .await
    .unwrap();
    let all: Vec<String> = all.iter().map(|e| e.id.to_string()).collect();
    assert_eq!(by_page, all);
    let mut by_cursor = Vec::new();
    let mut url = format!("{path}?pageSize=200");
    loop {
        let before = stoa_core::db::thread_queries();
        let res = app.send(get(&url, &admin)).await;
        assert_eq!(res.status, 200, "{}", res.text());
        // The same four statements as a page (the floor starts at the key).
        assert_eq!(stoa_core::db::thread_queries() - before, 4);
        let body = res.json();
        by_cursor.extend(ids(&body));
        match body["nextCursor"].as_str() {
            Some(cursor) => url = format!("{path}?pageSize=200&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(by_cursor, by_page);

    let res = app
        .send(get(&format!("{path}?cursor=not-a-cursor"), &admin))
        .await;
    assert_eq!(res.status, 400, "{}", res.text());
    // A well-formed cursor of another list (or sort) is refused too.
    let foreign = stoa_core::list::encode_cursor(
        "audit_logs.actions:createdAt:desc",
        200,
        &(time::OffsetDateTime::now_utc(), uuid::Uuid::new_v4()),
    )
    .unwrap();
    let res = app
        .send(get(&format!("{path}?cursor={foreign}"), &admin))
        .await;
    assert_eq!(res.status, 400, "another list's cursor");
}

#[actix_web::test]
async fn repeated_reads_list_at_their_own_times_in_pages_cursors_and_windows() {
    let app = start().await;
    let acme = seed(&app.db, "Acme Corp", "acme.com").await;
    let admin = token_for(&app.db, acme.admin).await;
    let mut conn = app.db.conn().await.unwrap();
    #[derive(diesel::QueryableByName)]
    struct Now {
        #[diesel(sql_type = diesel::sql_types::Timestamptz)]
        now: time::OffsetDateTime,
    }
    let now: Now = diesel::sql_query("SELECT now() - interval '1 second' AS now")
        .get_result(&mut *conn)
        .await
        .unwrap();
    let t = now.now;
    // 150 rows 1 ms apart, two records each, each row read again 2, 6 and
    // 10 ms after its first read (the longest span a row may hold): a row's
    // later reads are newer than the next 10 rows' first reads.
    diesel::sql_query(format!(
        "INSERT INTO access_reads (tenant_id, organization_id, actor_user_id, resource_kind, \
         resource_ids, entry_ids, access_type, created_at, repeat_bases, repeat_ats) \
         SELECT '{}', '{}', '{}', 'auth.user', ARRAY['a' || g, 'b' || g], \
                ARRAY[gen_random_uuid(), gen_random_uuid()], 'read:list', at, \
                ARRAY[gen_random_uuid(), gen_random_uuid(), gen_random_uuid()], \
                ARRAY[at + interval '2 ms', at + interval '6 ms', at + interval '10 ms'] \
         FROM generate_series(1, 150) g, \
              LATERAL (SELECT '{}'::timestamptz - g * interval '1 ms' AS at) AS t",
        acme.tenant_id,
        acme.organization_id,
        acme.admin,
        t.format(&time::format_description::well_known::Rfc3339)
            .unwrap()
    ))
    .execute(&mut *conn)
    .await
    .unwrap();
    #[derive(diesel::QueryableByName)]
    struct Entry {
        #[diesel(sql_type = diesel::sql_types::Uuid)]
        id: uuid::Uuid,
    }
    let db = app.db.clone();
    let expected = |window: String| {
        let db = db.clone();
        let sql = format!(
            "SELECT id FROM access_logs WHERE actor_user_id = '{}' {window} \
             ORDER BY created_at DESC, id DESC",
            acme.admin
        );
        async move {
            let mut conn = db.conn().await.unwrap();
            let rows: Vec<Entry> = diesel::sql_query(sql).load(&mut *conn).await.unwrap();
            rows.iter().map(|e| e.id.to_string()).collect::<Vec<_>>()
        }
    };
    let all = expected(String::new()).await;
    assert_eq!(all.len(), 150 * 4 * 2, "every read's every record");
    let distinct: std::collections::HashSet<_> = all.iter().collect();
    assert_eq!(distinct.len(), all.len(), "entry ids are distinct");

    let path = "/api/audit_logs/audit-logs/access";
    for size in [7, 50] {
        let mut by_page = Vec::new();
        for page in 1.. {
            let body = app
                .send(get(&format!("{path}?pageSize={size}&page={page}"), &admin))
                .await
                .json();
            let ids = entry_ids(&body);
            if ids.is_empty() {
                break;
            }
            by_page.extend(ids);
        }
        assert_eq!(by_page, all, "pages of {size}");
    }
    let mut by_cursor = Vec::new();
    let mut url = format!("{path}?pageSize=33");
    loop {
        let body = app.send(get(&url, &admin)).await.json();
        by_cursor.extend(entry_ids(&body));
        match body["nextCursor"].as_str() {
            Some(cursor) => url = format!("{path}?pageSize=33&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(by_cursor, all);

    // A window lists exactly the reads inside it, by their own times.
    let at = |ms: i64| {
        (t + time::Duration::milliseconds(ms))
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap()
    };
    let (after, before) = (at(-100), at(-60));
    let body = app
        .send(get(
            &format!("{path}?pageSize=200&includeTotal=true&after={after}&before={before}"),
            &admin,
        ))
        .await
        .json();
    let window = expected(format!(
        "AND created_at > '{after}' AND created_at < '{before}'"
    ))
    .await;
    assert!(window.len() > 200, "{}", window.len());
    assert_eq!(body["total"], json!(window.len()));
    assert_eq!(entry_ids(&body), window[..window.len().min(200)]);
}
