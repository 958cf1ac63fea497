//! `/attachments/library` and `/attachments/transfer`.

use serde_json::json;
use stoa_testkit::requests::patch_json;

use super::support::*;

const LIBRARY: &str = "/api/attachments/library";

#[actix_web::test]
async fn the_library_lists_searches_filters_patches_and_deletes() {
    let h = start_default().await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    let a = uploaded(
        &h,
        &admin,
        form("x:y", "r", "Alpha_report.txt", "text/plain", b"alpha").text("tags", "red,blue"),
    )
    .await;
    let b = uploaded(
        &h,
        &admin,
        form("x:y", "r", "beta.png", "image/png", &png(4, 4)).text("tags", "red"),
    )
    .await;
    uploaded(
        &h,
        &admin,
        form("x:y", "r", "100%_done.txt", "text/plain", b"x"),
    )
    .await;

    let res = h.app.send(get(LIBRARY, &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["total"], 3);
    assert_eq!(body["page"], 1);
    assert_eq!(body["pageSize"], 25);
    assert_eq!(body["availableTags"], json!(["blue", "red"]));
    assert_eq!(body["partitions"].as_array().unwrap().len(), 2);
    let beta = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == b.as_str())
        .unwrap();
    assert!(beta["thumbnailUrl"].as_str().unwrap().contains("width=200"));
    assert_eq!(beta["partitionTitle"], "Private attachments");

    let names = |res: &stoa_testkit::TestResponse| -> Vec<String> {
        res.json()["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["fileName"].as_str().unwrap().to_string())
            .collect()
    };
    let res = h
        .app
        .send(get(&format!("{LIBRARY}?search=ALPHA"), &admin))
        .await;
    assert_eq!(names(&res), ["Alpha_report.txt"]);
    // `%` is searched for, not a wildcard.
    let res = h
        .app
        .send(get(&format!("{LIBRARY}?search=%25"), &admin))
        .await;
    assert_eq!(res.json()["total"], 0, "the sanitized name has no `%`");
    let res = h
        .app
        .send(get(&format!("{LIBRARY}?search=_done"), &admin))
        .await;
    assert_eq!(names(&res), ["100__done.txt"]);
    let res = h
        .app
        .send(get(&format!("{LIBRARY}?tags=red,blue"), &admin))
        .await;
    assert_eq!(names(&res), ["Alpha_report.txt"]);
    let res = h
        .app
        .send(get(
            &format!("{LIBRARY}?sortField=fileName&sortDir=asc&pageSize=2"),
            &admin,
        ))
        .await;
    assert_eq!(names(&res), ["100__done.txt", "Alpha_report.txt"]);
    assert_eq!(res.json()["totalPages"], 2);
    for bad in [
        "pageSize=101",
        "pageSize=0",
        "page=x",
        "sortField=evil",
        "sortDir=up",
    ] {
        let res = h.app.send(get(&format!("{LIBRARY}?{bad}"), &admin)).await;
        assert_eq!(res.status, 400, "{bad}");
        assert_eq!(error(&res), "Invalid query");
    }

    let res = h.app.send(get(&format!("{LIBRARY}/{a}"), &admin)).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["item"]["content"], "alpha");
    assert_eq!(res.json()["item"]["customFields"], serde_json::Value::Null);

    let res = h
        .app
        .send(patch_json(
            &format!("{LIBRARY}/{a}"),
            &admin,
            json!({"tags": ["green", "green "], "customFields": {"owner": "ann"}}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["item"]["tags"], json!(["green"]));
    // The tags in use follow the change (kept by triggers, not recomputed).
    let tags_in_use = |res: stoa_testkit::TestResponse| res.json()["availableTags"].clone();
    assert_eq!(
        tags_in_use(h.app.send(get(LIBRARY, &admin)).await),
        json!(["green", "red"])
    );
    assert_eq!(res.json()["item"]["customFields"], json!({"owner": "ann"}));
    assert_eq!(
        res.json()["item"]["assignments"],
        json!([{"type": "x:y", "id": "r"}]),
        "omitted assignments stay"
    );
    for bad in [
        json!({"tags": "x"}),
        json!({"customFields": {"a": {"b": 1}}}),
        json!({"assignments": [{"type": ""}]}),
    ] {
        let res = h
            .app
            .send(patch_json(&format!("{LIBRARY}/{a}"), &admin, bad.clone()))
            .await;
        assert_eq!(res.status, 400, "{bad}");
    }
    let res = h
        .app
        .send(
            actix_web::test::TestRequest::patch()
                .uri(&format!("{LIBRARY}/{a}"))
                .insert_header(("authorization", format!("Bearer {admin}")))
                .insert_header(("content-type", "application/json"))
                .set_payload("{not json"),
        )
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(error(&res), "Invalid payload");

    // Another tenant sees none of it.
    let globex = seed(h.db(), "Globex", "globex.com").await;
    let other = token_for(h.db(), globex.admin).await;
    assert_eq!(h.app.send(get(LIBRARY, &other)).await.json()["total"], 0);
    assert_eq!(
        tags_in_use(h.app.send(get(LIBRARY, &other)).await),
        json!([])
    );
    assert_eq!(
        h.app
            .send(get(&format!("{LIBRARY}/{a}"), &other))
            .await
            .status,
        404
    );
    assert_eq!(
        h.app
            .send(patch_json(
                &format!("{LIBRARY}/{a}"),
                &other,
                json!({"tags": []})
            ))
            .await
            .status,
        404
    );
    assert_eq!(
        h.app
            .send(delete(&format!("{LIBRARY}/{a}"), &other))
            .await
            .status,
        404
    );
    assert_eq!(
        h.app
            .send(get(&format!("{LIBRARY}/nope"), &admin))
            .await
            .status,
        400
    );

    // Employees read but do not change.
    let employee = token_for(h.db(), acme.employee).await;
    assert_eq!(h.app.send(get(LIBRARY, &employee)).await.status, 200);
    assert_eq!(
        h.app
            .send(delete(&format!("{LIBRARY}/{a}"), &employee))
            .await
            .status,
        403
    );

    let res = h.app.send(delete(&format!("{LIBRARY}/{a}"), &admin)).await;
    assert_eq!(res.status, 200);
    assert_eq!(
        tags_in_use(h.app.send(get(LIBRARY, &admin)).await),
        json!(["red"]),
        "a deleted file's only tag is no longer in use"
    );
    assert_eq!(
        h.app
            .send(get(&format!("{LIBRARY}/{a}"), &admin))
            .await
            .status,
        404
    );
}

#[actix_web::test]
async fn transfer_moves_attachments_of_one_entity_and_their_assignments() {
    let h = start_default().await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    let a = uploaded(
        &h,
        &admin,
        form("sales:order", "draft", "a.txt", "text/plain", b"a"),
    )
    .await;
    let other_entity = uploaded(
        &h,
        &admin,
        form("sales:quote", "draft", "b.txt", "text/plain", b"b"),
    )
    .await;

    let res = h
        .app
        .send(post_json(
            "/api/attachments/transfer",
            &admin,
            json!({"entityId": "sales:order", "attachmentIds": [a, other_entity], "toRecordId": "o-1"}),
        ))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["updated"], 1);
    let list = h
        .app
        .send(get(
            "/api/attachments?entityId=sales:order&recordId=o-1",
            &admin,
        ))
        .await;
    assert_eq!(list.json()["items"][0]["id"], a.as_str());
    assert_eq!(
        list.json()["items"][0]["assignments"],
        json!([{"type": "sales:order", "id": "o-1"}])
    );

    let res = h
        .app
        .send(post_json(
            "/api/attachments/transfer",
            &admin,
            json!({"entityId": "sales:order", "attachmentIds": [a], "fromRecordId": "draft", "toRecordId": "o-2"}),
        ))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(error(&res), "Attachments not found");
    for bad in [
        json!({"entityId": "sales:order", "attachmentIds": [], "toRecordId": "o"}),
        json!({"entityId": "sales:order", "attachmentIds": ["nope"], "toRecordId": "o"}),
        json!({"entityId": "sales:order", "attachmentIds": [a], "toRecordId": "../o"}),
        json!({"attachmentIds": [a], "toRecordId": "o"}),
    ] {
        let res = h
            .app
            .send(post_json("/api/attachments/transfer", &admin, bad.clone()))
            .await;
        assert_eq!(res.status, 400, "{bad}");
    }
    let globex = seed(h.db(), "Globex", "globex.com").await;
    let other = token_for(h.db(), globex.admin).await;
    let res = h
        .app
        .send(post_json(
            "/api/attachments/transfer",
            &other,
            json!({"entityId": "sales:order", "attachmentIds": [a], "toRecordId": "stolen"}),
        ))
        .await;
    assert_eq!(res.status, 404);
}

#[actix_web::test]
async fn the_library_is_one_statement_with_keyset_cursors_per_sort() {
    let h = start_default().await;
    let acme = seed(h.db(), "Acme", "acme.com").await;
    let admin = token_for(h.db(), acme.admin).await;
    for (i, tag) in ["red", "blue", "red", "green", "red"].iter().enumerate() {
        let body = vec![b'x'; i + 1];
        uploaded(
            &h,
            &admin,
            form("x:y", "r", &format!("file-{i}.txt"), "text/plain", &body).text("tags", tag),
        )
        .await;
    }

    // Warm the ACL cache: a page is then the session check and one statement
    // carrying the page, its total, the tags in use and the partitions.
    h.app
        .send(get(&format!("{LIBRARY}?pageSize=1"), &admin))
        .await;
    let (n, body) = h
        .app
        .statements(
            &format!("{LIBRARY}?pageSize=2&sortField=fileName&sortDir=asc"),
            &admin,
        )
        .await;
    assert_eq!(n, 2, "library statements: {body}");
    assert_eq!(
        (&body["total"], &body["totalCapped"]),
        (&json!(5), &json!(false))
    );
    assert_eq!(body["availableTags"], json!(["blue", "green", "red"]));
    assert_eq!(body["partitions"].as_array().unwrap().len(), 2);

    // Following the cursors reads every file once, in order, for each sort.
    for (sort, dir, expected) in [
        (
            "fileName",
            "asc",
            [
                "file-0.txt",
                "file-1.txt",
                "file-2.txt",
                "file-3.txt",
                "file-4.txt",
            ],
        ),
        (
            "fileSize",
            "desc",
            [
                "file-4.txt",
                "file-3.txt",
                "file-2.txt",
                "file-1.txt",
                "file-0.txt",
            ],
        ),
        (
            "createdAt",
            "asc",
            [
                "file-0.txt",
                "file-1.txt",
                "file-2.txt",
                "file-3.txt",
                "file-4.txt",
            ],
        ),
    ] {
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let path = match &cursor {
                Some(c) => {
                    format!("{LIBRARY}?pageSize=2&sortField={sort}&sortDir={dir}&cursor={c}")
                }
                None => format!("{LIBRARY}?pageSize=2&sortField={sort}&sortDir={dir}"),
            };
            let (n, body) = h.app.statements(&path, &admin).await;
            // Two statements, or one for the first page of the order read
            // above (a kept answer).
            let kept = cursor.is_none() && sort == "fileName" && dir == "asc";
            assert_eq!(n, if kept { 1 } else { 2 }, "{path}");
            for item in body["items"].as_array().unwrap() {
                seen.push(item["fileName"].as_str().unwrap().to_string());
            }
            match body["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => break,
            }
        }
        assert_eq!(seen, expected, "{sort} {dir}");
    }

    // A cursor of another sort, or no cursor at all, is 400.
    let res = h
        .app
        .send(get(
            &format!("{LIBRARY}?pageSize=2&sortField=fileName"),
            &admin,
        ))
        .await;
    let cursor = res.json()["nextCursor"].as_str().unwrap().to_string();
    for bad in [
        format!("{LIBRARY}?pageSize=2&sortField=fileSize&cursor={cursor}"),
        format!("{LIBRARY}?cursor=not-a-cursor"),
    ] {
        let res = h.app.send(get(&bad, &admin)).await;
        assert_eq!(res.status, 400, "{bad}: {}", res.text());
    }

    // A page past the end still names the tags and partitions.
    let res = h.app.send(get(&format!("{LIBRARY}?page=9"), &admin)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let body = res.json();
    assert_eq!(body["items"], json!([]));
    assert_eq!(body["total"], 5);
    assert_eq!(body["availableTags"], json!(["blue", "green", "red"]));

    // The same page again is kept (stoa_core::http::read_cache): the session
    // check alone, the same body; an upload moves the tenant's library
    // version, and the next read is computed again and shows it.
    let page = format!("{LIBRARY}?pageSize=2&sortField=fileName&sortDir=asc");
    let (_, first) = h.app.statements(&page, &admin).await;
    let (n, again) = h.app.statements(&page, &admin).await;
    assert_eq!(
        (n, &again),
        (1, &first),
        "a kept page is the session check alone"
    );
    uploaded(
        &h,
        &admin,
        form("x:y", "r", "0-first.txt", "text/plain", b"0").text("tags", "amber"),
    )
    .await;
    let (n, after) = h.app.statements(&page, &admin).await;
    // The kept answer's check finds the version moved: the page is read again.
    assert!(n > 1, "recomputed after an upload ({n} statements)");
    assert_eq!(after["items"][0]["fileName"], "0-first.txt");
    assert_eq!(
        after["availableTags"],
        json!(["amber", "blue", "green", "red"])
    );
}
