//! The outbound client: address guard (literal IPs, names resolving to
//! loopback, redirects), allowlist, the three timeouts, the response bound
//! (whole and streamed), typed JSON and signed webhooks, against
//! `stoa_testkit::FakeUpstream` servers on loopback addresses.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use stoa_core::outbound::signing::{self, WebhookSigner};
use stoa_core::outbound::{Cidr, Outbound, OutboundConfig, OutboundError};
use stoa_testkit::{Answer, FakeUpstream, Recorded};

fn config(allow: &[&str]) -> OutboundConfig {
    OutboundConfig {
        connect_timeout: Duration::from_millis(500),
        first_byte_timeout: Duration::from_millis(400),
        idle_timeout: Duration::from_millis(300),
        max_response_bytes: 1000,
        max_redirects: 3,
        allow: allow.iter().map(|c| c.parse::<Cidr>().unwrap()).collect(),
    }
}

fn outbound(allow: &[&str]) -> Outbound {
    Outbound::new(&config(allow)).unwrap()
}

/// An upstream on `ip` answering `text` to everything.
fn serve_text(ip: &str, text: &'static str) -> FakeUpstream {
    FakeUpstream::on(ip, move |_| Answer::text(200, text))
}

fn assert_blocked(result: Result<stoa_core::outbound::OutboundResponse, OutboundError>) {
    match result {
        Err(OutboundError::Blocked(blocked)) => assert!(blocked.addr.is_loopback(), "{blocked}"),
        other => panic!("expected a blocked address, got {other:?}"),
    }
}

async fn fetch(
    client: &stoa_core::outbound::OutboundClient,
    url: &str,
) -> Result<stoa_core::outbound::OutboundResponse, OutboundError> {
    client.get(url)?.send().await
}

#[actix_web::test]
async fn guarded_client_refuses_a_loopback_ip_unless_allowed() {
    let upstream = serve_text("127.0.0.1", "secret");
    let url = upstream.url("/internal");

    assert_blocked(fetch(outbound(&[]).guarded(), &url).await);
    let v6 = format!(
        "http://[::ffff:127.0.0.1]:{}/internal",
        upstream.addr().port()
    );
    assert_blocked(fetch(outbound(&[]).guarded(), &v6).await);
    // Every way of sending passes the guard: streamed, typed JSON, signed
    // (a name, so the refusal comes from the resolver, not the URL check).
    let client = outbound(&[]);
    let by_name = format!("http://localhost:{}/internal", upstream.addr().port());
    let streamed = client
        .guarded()
        .get(&by_name)
        .unwrap()
        .send_streaming()
        .await;
    assert!(
        matches!(streamed, Err(OutboundError::Blocked(_))),
        "{streamed:?}"
    );
    let typed = client
        .guarded()
        .post(&by_name)
        .unwrap()
        .json(&serde_json::json!({"a": 1}))
        .sign_webhook(&WebhookSigner::new("s"), "evt")
        .send_json::<serde_json::Value>()
        .await;
    assert!(matches!(typed, Err(OutboundError::Blocked(_))), "{typed:?}");
    assert_eq!(upstream.hits(), 0, "nothing reached the server");

    // The allowlist opens it; the trusted client never checks.
    let res = fetch(outbound(&["127.0.0.0/8"]).guarded(), &url)
        .await
        .unwrap();
    assert_eq!((res.status, res.text().as_str()), (200, "secret"));
    let res = fetch(outbound(&[]).trusted(), &url).await.unwrap();
    assert_eq!(res.status, 200);
    assert_eq!(upstream.hits(), 2);
}

#[actix_web::test]
async fn guarded_client_refuses_a_name_resolving_to_loopback() {
    let upstream = serve_text("127.0.0.1", "secret");
    let url = format!("http://localhost:{}/internal", upstream.addr().port());

    assert_blocked(fetch(outbound(&[]).guarded(), &url).await);
    assert_eq!(upstream.hits(), 0);

    let res = fetch(outbound(&["127.0.0.1"]).guarded(), &url)
        .await
        .unwrap();
    assert_eq!(res.text(), "secret");
}

#[actix_web::test]
async fn redirects_to_loopback_are_refused() {
    let inner_server = serve_text("127.0.0.1", "secret");
    let inner = inner_server.addr();
    // The first hop is on an allowlisted address; it redirects inwards.
    let front_server = FakeUpstream::on("127.0.0.2", move |req: &Recorded| {
        if req.path.contains("/by-ip") {
            Answer::redirect(format!("http://{inner}/secret"))
        } else {
            Answer::redirect(format!("http://localhost:{}/secret", inner.port()))
        }
    });
    let front = front_server.addr();
    let client = outbound(&["127.0.0.2/32"]);
    assert_blocked(fetch(client.guarded(), &format!("http://{front}/by-ip")).await);
    assert_blocked(fetch(client.guarded(), &format!("http://{front}/by-name")).await);
    assert_eq!(inner_server.hits(), 0, "the redirect was not followed");

    // Control: with the target allowed too, the same redirect is followed.
    let res = fetch(
        outbound(&["127.0.0.2/32", "127.0.0.1/32"]).guarded(),
        &format!("http://{front}/by-ip"),
    )
    .await
    .unwrap();
    assert_eq!((res.status, res.text().as_str()), (200, "secret"));
    assert_eq!(res.url.port(), Some(inner.port()));
}

#[actix_web::test]
async fn redirect_loops_stop() {
    let upstream = FakeUpstream::start(|req: &Recorded| {
        let n: u32 = req.path.trim_start_matches('/').parse().unwrap_or(0);
        Answer::redirect(format!("/{}", n + 1))
    });
    let err = fetch(outbound(&[]).trusted(), &upstream.url("/0"))
        .await
        .unwrap_err();
    assert!(matches!(err, OutboundError::TooManyRedirects), "{err:?}");
}

#[actix_web::test]
async fn a_server_that_never_answers_fails_on_the_first_byte_timeout() {
    let upstream = FakeUpstream::scripted([Answer::Hang]);
    let started = Instant::now();
    let err = fetch(outbound(&[]).trusted(), &upstream.url("/"))
        .await
        .unwrap_err();
    assert!(matches!(err, OutboundError::Timeout), "{err:?}");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(350) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    assert_eq!(upstream.hits(), 1);
    // An answer 600 ms late: past the default first-byte wait, within a
    // longer one set for the request (a model thinking before it answers).
    let slow = FakeUpstream::start(|_| Answer::text(200, "late").after(Duration::from_millis(600)));
    let res = fetch(outbound(&[]).trusted(), &slow.url("/")).await;
    assert!(matches!(res, Err(OutboundError::Timeout)), "{res:?}");
    let res = outbound(&[])
        .trusted()
        .get(&slow.url("/"))
        .unwrap()
        .first_byte_timeout(Duration::from_secs(5))
        .send()
        .await
        .unwrap();
    assert_eq!(res.text(), "late");
}

#[actix_web::test]
async fn a_stream_may_run_long_while_it_keeps_producing_and_fails_when_it_stalls() {
    // Ten chunks 150 ms apart: 1.5 s in all, five times the idle timeout and
    // longer than the first-byte timeout; each pause is within the idle one.
    let chunks: Vec<(Duration, String)> = (0..10)
        .map(|i| (Duration::from_millis(150), format!("data: {i}\n\n")))
        .collect();
    let upstream = FakeUpstream::scripted([
        Answer::stream(200, chunks),
        Answer::StallAfter {
            status: 200,
            body: b"data: 0\n\n".to_vec(),
        },
    ]);
    let client = outbound(&[]);
    let mut stream = client
        .trusted()
        .get(&upstream.url("/chat"))
        .unwrap()
        .send_streaming()
        .await
        .unwrap();
    assert_eq!(stream.status, 200);
    let mut seen = Vec::new();
    while let Some(chunk) = stream.next_chunk().await.unwrap() {
        seen.extend_from_slice(&chunk);
    }
    let text = String::from_utf8(seen).unwrap();
    assert!(
        text.starts_with("data: 0") && text.ends_with("data: 9\n\n"),
        "{text}"
    );

    // A stream that goes silent ends with a timeout after what it sent.
    let mut stalled = client
        .trusted()
        .get(&upstream.url("/chat"))
        .unwrap()
        .send_streaming()
        .await
        .unwrap();
    let first = stalled.next_chunk().await.unwrap().unwrap();
    assert_eq!(&first[..], b"data: 0\n\n");
    let started = Instant::now();
    assert!(matches!(
        stalled.next_chunk().await,
        Err(OutboundError::Timeout)
    ));
    assert!(started.elapsed() < Duration::from_secs(3));

    // A deadline bounds the whole exchange however steadily it trickles.
    let res = client
        .trusted()
        .get(&upstream.url("/chat"))
        .unwrap()
        .first_byte_timeout(Duration::from_secs(5))
        .idle_timeout(Duration::from_secs(5))
        .deadline(Duration::from_millis(300))
        .send()
        .await;
    assert!(matches!(res, Err(OutboundError::Timeout)), "{res:?}");
}

#[actix_web::test]
async fn response_size_is_bounded() {
    let big = "x".repeat(1500);
    let declared = FakeUpstream::start(move |_| Answer::text(200, &big));
    // Chunked, without a length: the bound applies while reading.
    let chunked = FakeUpstream::scripted([Answer::stream(
        200,
        (0..6).map(|_| (Duration::ZERO, vec![b'y'; 250])),
    )]);
    let client = outbound(&[]);

    for upstream in [&declared, &chunked] {
        let err = fetch(client.trusted(), &upstream.url("/"))
            .await
            .unwrap_err();
        assert!(
            matches!(err, OutboundError::TooLarge { limit: 1000 }),
            "{}: {err:?}",
            upstream.url("/")
        );
    }
    // Streamed, the bound applies too: the chunk that passes it fails.
    let mut stream = client
        .trusted()
        .get(&chunked.url("/"))
        .unwrap()
        .send_streaming()
        .await
        .unwrap();
    let mut read = 0;
    let err = loop {
        match stream.next_chunk().await {
            Ok(Some(chunk)) => read += chunk.len(),
            Ok(None) => panic!("the stream ended within the bound"),
            Err(err) => break err,
        }
    };
    assert!(
        matches!(err, OutboundError::TooLarge { limit: 1000 }),
        "{err:?}"
    );
    assert!(read <= 1000, "{read}");
    // A declared length past the bound fails before any body is read.
    let err = client
        .trusted()
        .get(&declared.url("/"))
        .unwrap()
        .send_streaming()
        .await
        .unwrap_err();
    assert!(matches!(err, OutboundError::TooLarge { .. }), "{err:?}");

    // Within the bound it is read whole; a per-request bound can lower it.
    let small = FakeUpstream::start(|_| Answer::text(200, &"z".repeat(900)));
    let res = fetch(client.trusted(), &small.url("/")).await.unwrap();
    assert_eq!(res.body.len(), 900);
    let err = client
        .trusted()
        .get(&small.url("/"))
        .unwrap()
        .max_response_bytes(100)
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboundError::TooLarge { limit: 100 }),
        "{err:?}"
    );
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Prompt<'a> {
    model: &'a str,
    max_tokens: u32,
}

#[derive(Deserialize, Debug, PartialEq)]
struct Reply {
    text: String,
}

#[actix_web::test]
async fn typed_json_goes_out_and_comes_back() {
    let upstream = FakeUpstream::scripted([
        Answer::json(200, &serde_json::json!({"text": "hi"})),
        Answer::json(200, &serde_json::json!({"other": 1})),
        Answer::json(503, &serde_json::json!({"text": "busy"})),
    ]);
    let client = outbound(&[]);
    let call = || {
        client
            .trusted()
            .post(&upstream.url("/v1/complete"))
            .unwrap()
            .json(&Prompt {
                model: "m",
                max_tokens: 5,
            })
    };
    let reply: Reply = call().send_json().await.unwrap();
    assert_eq!(reply, Reply { text: "hi".into() });
    let request = &upstream.requests()[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(
        request.json(),
        serde_json::json!({"model": "m", "maxTokens": 5})
    );

    let err = call().send_json::<Reply>().await.unwrap_err();
    assert!(matches!(err, OutboundError::Decode(_)), "{err:?}");
    let err = call().send_json::<Reply>().await.unwrap_err();
    assert!(
        matches!(err, OutboundError::Status { status: 503 }),
        "{err:?}"
    );

    // A body that cannot be JSON fails before anything is sent.
    let mut bad = std::collections::HashMap::new();
    bad.insert((1, 2), "tuple keys are not JSON");
    let before = upstream.hits();
    let err = client
        .trusted()
        .post(&upstream.url("/"))
        .unwrap()
        .json(&bad)
        .send()
        .await
        .unwrap_err();
    assert!(matches!(err, OutboundError::InvalidBody(_)), "{err:?}");
    assert_eq!(upstream.hits(), before);
}

#[actix_web::test]
async fn webhooks_are_signed_so_the_receiver_can_verify_them() {
    let upstream = FakeUpstream::scripted([Answer::status(204)]);
    let secret = WebhookSigner::generate_secret().unwrap();
    let signer = WebhookSigner::new(&secret);
    let res = outbound(&[])
        .trusted()
        .post(&upstream.url("/hook"))
        .unwrap()
        .json(&serde_json::json!({"name": "deals.deal.created"}))
        .sign_webhook(&signer, "evt_42")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status, 204);
    let request = &upstream.requests()[0];
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let (id, ts, sig) = (
        request.header(signing::WEBHOOK_ID).unwrap(),
        request.header(signing::WEBHOOK_TIMESTAMP).unwrap(),
        request.header(signing::WEBHOOK_SIGNATURE).unwrap(),
    );
    assert_eq!(id, "evt_42");
    assert!(sig.starts_with("v1,"), "{sig}");
    let receiver = WebhookSigner::new(&secret);
    assert_eq!(
        receiver.verify(
            id,
            ts,
            sig,
            &request.body,
            now,
            signing::DEFAULT_TOLERANCE_SECS
        ),
        Ok(())
    );
    // The signature covers the exact body bytes.
    let mut tampered = request.body.clone();
    tampered.push(b' ');
    assert!(receiver.verify(id, ts, sig, &tampered, now, 300).is_err());
}

#[actix_web::test]
async fn only_http_urls_are_accepted() {
    let client = outbound(&[]);
    for url in [
        "ftp://example.com/x",
        "file:///etc/passwd",
        "not a url",
        "http://",
    ] {
        let err = client.guarded().get(url).unwrap_err();
        assert!(
            matches!(err, OutboundError::InvalidUrl(_)),
            "{url}: {err:?}"
        );
    }
    // Private ranges other than loopback are refused before sending too.
    for url in [
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data",
        "http://192.168.1.1/",
        "http://[fd00::1]/",
        "http://0.0.0.0/",
    ] {
        let err = client.guarded().get(url).unwrap_err();
        assert!(matches!(err, OutboundError::Blocked(_)), "{url}: {err:?}");
    }
}
