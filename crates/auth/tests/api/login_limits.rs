//! Login limits under attack: a concurrent burst, a stranger locking an owner
//! out, a distributed attack, and the quota headers.

use std::net::SocketAddr;

use futures_util::future::join_all;

use super::support::*;

fn peer(n: u8) -> SocketAddr {
    format!("10.0.0.{n}:4000").parse().unwrap()
}

#[actix_web::test]
async fn a_concurrent_burst_cannot_pass_the_limit() {
    let app = start().await;
    acme(&app.db).await;
    // 150 wrong passwords at once, then the right one, all from one address.
    // Before the fix every attempt was checked before any was counted: all
    // 150 got 401 and the correct password signed in and cleared the counter.
    let mut burst: Vec<_> = (0..150)
        .map(|_| app.send(login_form("superadmin@acme.com", "wrong-pass").peer_addr(peer(66))))
        .collect();
    burst.push(app.send(login_form("superadmin@acme.com", PASSWORD).peer_addr(peer(66))));
    let results = join_all(burst).await;
    let statuses: Vec<u16> = results.iter().map(|r| r.status.as_u16()).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 401).count(),
        5,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 429).count(),
        146,
        "{statuses:?}"
    );
    let last = results.last().unwrap();
    assert_eq!(
        last.status, 429,
        "the right password inside the burst is refused too"
    );
    for res in &results {
        assert_eq!(res.header("x-ratelimit-limit"), Some("5"), "{}", res.text());
        assert!(res.header("x-ratelimit-remaining").is_some());
        if res.status == 429 {
            let retry: u64 = res.header("retry-after").unwrap().parse().unwrap();
            assert!((1..=60).contains(&retry), "{retry}");
            assert_eq!(res.header("x-ratelimit-remaining"), Some("0"));
        }
    }
    // Still locked for that address afterwards: nothing reset the counter.
    let res = app
        .send(login_form("superadmin@acme.com", PASSWORD).peer_addr(peer(66)))
        .await;
    assert_eq!(res.status, 429);
    // The owner, elsewhere, signs in.
    let res = app
        .send(login_form("superadmin@acme.com", PASSWORD).peer_addr(peer(1)))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
}

#[actix_web::test]
async fn a_stranger_cannot_lock_the_owner_out() {
    let app = start().await;
    acme(&app.db).await;
    for n in 0..5 {
        let res = app
            .send(login_form("employee@acme.com", "wrong-pass").peer_addr(peer(66)))
            .await;
        assert_eq!(res.status, 401);
        assert_eq!(res.header("x-ratelimit-limit"), Some("5"));
        assert_eq!(
            res.header("x-ratelimit-remaining"),
            Some((4 - n).to_string().as_str())
        );
    }
    // The stranger's address is locked for this account, even with the right
    // password...
    let res = app
        .send(login_form("employee@acme.com", PASSWORD).peer_addr(peer(66)))
        .await;
    assert_eq!(res.status, 429, "{}", res.text());
    assert_eq!(res.json()["ok"], false);
    // ...the owner at their own address is not.
    let res = app
        .send(login_form("employee@acme.com", PASSWORD).peer_addr(peer(1)))
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.header("x-ratelimit-limit"), Some("5"));
    assert_eq!(res.header("x-ratelimit-remaining"), Some("5"));
    // Other accounts from the stranger's address are unaffected.
    let res = app
        .send(login_form("admin@acme.com", PASSWORD).peer_addr(peer(66)))
        .await;
    assert_eq!(res.status, 200);
}

#[actix_web::test]
async fn a_distributed_attack_hits_the_account_backstop() {
    let app = start_with(|c| c.rate_limits.login_account = "8/300".parse().unwrap()).await;
    acme(&app.db).await;
    // Four failures each from two addresses: below the per-address lock-out.
    for n in 0..8u8 {
        let res = app
            .send(login_form("employee@acme.com", "wrong-pass").peer_addr(peer(100 + n % 2)))
            .await;
        assert_eq!(res.status, 401, "attempt {n}");
    }
    // Any further address, even with the right password, waits.
    let res = app
        .send(login_form("employee@acme.com", PASSWORD).peer_addr(peer(200)))
        .await;
    assert_eq!(res.status, 429);
    let retry: u64 = res.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=300).contains(&retry), "{retry}");
    assert_eq!(res.header("x-ratelimit-limit"), Some("8"));
    assert_eq!(res.header("x-ratelimit-remaining"), Some("0"));
}

#[actix_web::test]
async fn correct_passwords_give_their_slot_back() {
    let app = start_with(|c| c.rate_limits.login_account = "8/300".parse().unwrap()).await;
    acme(&app.db).await;
    // Four failures, then many successes from the same address: the successes
    // never count, and the first one clears this address's failures.
    for _ in 0..4 {
        let res = app
            .send(login_form("admin@acme.com", "wrong-pass").peer_addr(peer(5)))
            .await;
        assert_eq!(res.status, 401);
    }
    for _ in 0..12 {
        let res = app
            .send(login_form("admin@acme.com", PASSWORD).peer_addr(peer(5)))
            .await;
        assert_eq!(res.status, 200, "{}", res.text());
        assert_eq!(
            res.header("x-ratelimit-remaining"),
            Some("4"),
            "backstop: 8 - 4 failures"
        );
    }
    // An invalid form is not an attempt, but shows the quota.
    let res = app
        .send(login_form("admin@acme.com", "short").peer_addr(peer(5)))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.header("x-ratelimit-limit"), Some("8"));
    assert_eq!(res.header("x-ratelimit-remaining"), Some("4"));
}

#[actix_web::test]
async fn behind_a_proxy_a_correct_login_starts_the_address_counter_over() {
    // The reference scenario: twenty failures for one e-mail from twenty
    // forwarded addresses, then the owner's correct password.
    let app = start_with(|c| c.rate_limits.trust_proxy_depth = 1).await;
    acme(&app.db).await;
    let proxy = peer(250);
    let via = |password: &str, client: &str| {
        login_form("employee@acme.com", password)
            .peer_addr(proxy)
            .insert_header(("x-forwarded-for", client.to_string()))
    };
    for n in 0..20u8 {
        let res = app
            .send(via("wrong-pass", &format!("198.51.100.{n}")))
            .await;
        assert_eq!(res.status, 401, "attempt {n}: {}", res.text());
    }
    // Four failures from the owner's own address, then the right password.
    for _ in 0..4 {
        let res = app.send(via("wrong-pass", "198.51.100.77")).await;
        assert_eq!(res.status, 401);
    }
    let res = app.send(via(PASSWORD, "198.51.100.77")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    // The e-mail + address counter started over: five more failures are
    // answered as failures, the sixth is refused.
    for n in 0..5 {
        let res = app.send(via("wrong-pass", "198.51.100.77")).await;
        assert_eq!(res.status, 401, "failure {n} after the success");
    }
    let before = time::OffsetDateTime::now_utc().unix_timestamp();
    let res = app.send(via("wrong-pass", "198.51.100.77")).await;
    assert_eq!(res.status, 429, "{}", res.text());
    let retry: i64 = res.header("retry-after").unwrap().parse().unwrap();
    let reset: i64 = res.header("x-ratelimit-reset").unwrap().parse().unwrap();
    assert!(
        (before + retry..=before + retry + 2).contains(&reset),
        "reset {reset}, retry {retry}, now {before}"
    );
    assert_eq!(res.header("x-ratelimit-limit"), Some("5"));
    assert_eq!(res.header("x-ratelimit-remaining"), Some("0"));
}
