//! `cargo xtask explorer-check`: the API explorer (`/api/docs`) in a real
//! browser. Installs nothing: it uses the distribution's Chromium
//! (`apt-get install -y chromium`; `STOA_CHROMIUM` names another binary).
//!
//! It starts the dev server on a free port against a scratch database,
//! opens `/api/docs` in headless Chromium driven over the DevTools protocol
//! (`--remote-debugging-pipe`: NUL-separated JSON on fds 3 and 4, which a
//! shell wires to the child's stdin and stdout), and checks that
//!
//! - the page lists every tag of the OpenAPI document,
//! - "try it out" of `GET /api/version` shows the server's answer,
//! - every request the page made went to the server itself,
//!
//! then saves a screenshot to docs/explorer.png.

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::bench::load::{self, Request};
use crate::cmd::{self, Result, root};
use crate::pg::Database;

const FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
];

fn chromium() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("STOA_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

pub fn run(_args: &[String]) -> Result<u8> {
    let Some(browser) = chromium() else {
        eprintln!(
            "xtask: no Chromium found (PATH or STOA_CHROMIUM); install the distribution's: \
             apt-get install -y chromium"
        );
        return Ok(1);
    };
    println!("xtask: building the server");
    let stoa = cmd::build_stoa(false)?;
    let db = Database::discover()?;
    let result = check(&stoa, &db, &browser);
    db.finish();
    result
}

fn check(stoa: &std::path::Path, db: &Database, browser: &std::path::Path) -> Result<u8> {
    let url = db.scratch_database("stoa_explorer")?;
    cmd::run(
        Command::new(stoa)
            .args(["init", "--demo"])
            .env("DATABASE_URL", &url)
            .env("STOA_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )?;
    let server = Server::start(stoa, &url)?;
    let base = format!("http://{}", server.addr);
    let (status, body) = load::once(server.addr, &Request::get("/api/docs/openapi.json"))?;
    if status != 200 {
        return Err(format!("/api/docs/openapi.json answered {status}"));
    }
    let doc: Value = serde_json::from_slice(&body).map_err(|e| format!("the document: {e}"))?;
    let tags = document_tags(&doc);
    let (_, version) = load::once(server.addr, &Request::get("/api/version"))?;
    let version = String::from_utf8_lossy(&version).trim().to_string();

    let profile = std::env::temp_dir().join(format!("stoa-explorer-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    let mut browser = Browser::start(browser, &profile)?;
    let outcome = browse(&mut browser, &base, &tags, &version);
    browser.stop();
    let _ = std::fs::remove_dir_all(&profile);
    drop(server);
    let (requests, png) = outcome?;

    let outside: Vec<&String> = requests
        .iter()
        .filter(|u| !u.starts_with(&format!("{base}/")) && !u.starts_with("data:"))
        .collect();
    println!(
        "xtask: the page made {} requests, all listed:",
        requests.len()
    );
    for request in &requests {
        // Inline images (`data:`) are no request; their text is long.
        let shown: String = request.chars().take(100).collect();
        let more = if shown.len() < request.len() {
            "..."
        } else {
            ""
        };
        println!("  {shown}{more}");
    }
    let shot = root().join("docs").join("explorer.png");
    std::fs::write(&shot, png).map_err(|e| format!("cannot write {}: {e}", shot.display()))?;
    println!("xtask: wrote {}", shot.display());
    if !outside.is_empty() {
        eprintln!("xtask: requests outside the server: {outside:?}");
        return Ok(1);
    }
    println!(
        "xtask: explorer check passed: {} tags listed, try it out of GET /api/version showed {version}, \
         no request outside {base}",
        tags.len()
    );
    Ok(0)
}

/// Every tag an operation of the document carries, in order of appearance.
fn document_tags(doc: &Value) -> Vec<String> {
    let mut tags: Vec<String> = Vec::new();
    for item in doc["paths"]
        .as_object()
        .into_iter()
        .flat_map(|p| p.values())
    {
        for op in item.as_object().into_iter().flat_map(|o| o.values()) {
            for tag in op["tags"].as_array().into_iter().flatten() {
                if let Some(tag) = tag.as_str()
                    && !tags.iter().any(|t| t == tag)
                {
                    tags.push(tag.to_string());
                }
            }
        }
    }
    tags
}

/// What the page shows and asks for: the requests' URLs and a screenshot.
fn browse(
    browser: &mut Browser,
    base: &str,
    tags: &[String],
    version: &str,
) -> Result<(Vec<String>, Vec<u8>)> {
    let target = browser.call("Target.createTarget", json!({"url": "about:blank"}), None)?;
    let target_id = target["targetId"]
        .as_str()
        .ok_or("no target id")?
        .to_string();
    let attached = browser.call(
        "Target.attachToTarget",
        json!({"targetId": target_id, "flatten": true}),
        None,
    )?;
    let session = attached["sessionId"]
        .as_str()
        .ok_or("no session id")?
        .to_string();
    let s = Some(session.as_str());
    browser.call("Network.enable", json!({}), s)?;
    browser.call("Page.enable", json!({}), s)?;
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 1280, "height": 2300, "deviceScaleFactor": 1, "mobile": false}),
        s,
    )?;
    browser.call(
        "Page.navigate",
        json!({"url": format!("{base}/api/docs")}),
        s,
    )?;

    // Every tag's section, once Swagger UI has read the document.
    let listed = wait_for(
        browser,
        s,
        "Array.from(document.querySelectorAll('h3.opblock-tag[data-tag]')).map(e => e.dataset.tag)",
        |v| v.as_array().is_some_and(|a| !a.is_empty()),
    )?;
    let listed: Vec<&str> = listed
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let missing: Vec<&String> = tags
        .iter()
        .filter(|t| !listed.contains(&t.as_str()))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the explorer does not list the tags {missing:?} (it lists {listed:?})"
        ));
    }
    println!("xtask: the explorer lists all {} tags", tags.len());
    let authorize = evaluate(
        browser,
        s,
        "document.querySelector('.auth-wrapper .authorize') !== null",
    )?;
    if authorize != json!(true) {
        return Err("the explorer shows no Authorize button".into());
    }

    // Try it out: GET /api/version, its answer shown on the page. Tags
    // start collapsed: open System, then the operation.
    evaluate(
        browser,
        s,
        "document.querySelector('h3.opblock-tag[data-tag=\"System\"]').click(); true",
    )?;
    wait_for(
        browser,
        s,
        "document.querySelector('#operations-System-version .opblock-summary-control') !== null",
        |v| v == &json!(true),
    )?;
    evaluate(
        browser,
        s,
        "document.querySelector('#operations-System-version .opblock-summary-control').click(); true",
    )?;
    wait_for(
        browser,
        s,
        "document.querySelector('#operations-System-version .try-out__btn') !== null",
        |v| v == &json!(true),
    )?;
    evaluate(
        browser,
        s,
        "document.querySelector('#operations-System-version .try-out__btn').click(); true",
    )?;
    wait_for(
        browser,
        s,
        "document.querySelector('#operations-System-version .execute') !== null",
        |v| v == &json!(true),
    )?;
    evaluate(
        browser,
        s,
        "document.querySelector('#operations-System-version .execute').click(); true",
    )?;
    let shown = wait_for(
        browser,
        s,
        "(() => { const r = document.querySelector('#operations-System-version .live-responses-table'); \
           return r ? r.innerText : ''; })()",
        |v| v.as_str().is_some_and(|t| t.contains("200")),
    )?;
    let shown = shown.as_str().unwrap_or_default();
    if !shown.contains(version) {
        return Err(format!(
            "try it out of GET /api/version did not show {version}: {shown}"
        ));
    }
    println!("xtask: try it out of GET /api/version showed 200 {version}");
    evaluate(browser, s, "window.scrollTo(0, 0); true")?;
    std::thread::sleep(Duration::from_millis(300));
    let shot = browser.call("Page.captureScreenshot", json!({"format": "png"}), s)?;
    let png = base64_decode(shot["data"].as_str().ok_or("no screenshot")?)?;
    Ok((browser.requests.clone(), png))
}

fn evaluate(browser: &mut Browser, session: Option<&str>, expression: &str) -> Result<Value> {
    let answer = browser.call(
        "Runtime.evaluate",
        json!({"expression": expression, "returnByValue": true}),
        session,
    )?;
    if let Some(error) = answer.get("exceptionDetails") {
        return Err(format!("{expression}: {error}"));
    }
    Ok(answer["result"]["value"].clone())
}

/// Evaluates `expression` until `done` holds for its value (30 s at most).
fn wait_for(
    browser: &mut Browser,
    session: Option<&str>,
    expression: &str,
    done: impl Fn(&Value) -> bool,
) -> Result<Value> {
    let started = Instant::now();
    loop {
        let value = evaluate(browser, session, expression)?;
        if done(&value) {
            return Ok(value);
        }
        if started.elapsed() > Duration::from_secs(30) {
            return Err(format!("waited 30 s for {expression}: {value}"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn base64_decode(text: &str) -> Result<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in text.as_bytes() {
        if c == b'=' {
            break;
        }
        let v = value(c).ok_or("a screenshot that is not base64")?;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

/// Headless Chromium driven over `--remote-debugging-pipe`.
struct Browser {
    child: Child,
    input: ChildStdin,
    messages: Receiver<Value>,
    next_id: u64,
    /// Every URL the page requested (`Network.requestWillBeSent`).
    requests: Vec<String>,
}

impl Browser {
    fn start(path: &std::path::Path, profile: &std::path::Path) -> Result<Self> {
        // The shell hands our stdin to Chromium as fd 3 (commands) and our
        // stdout as fd 4 (answers and events).
        let mut child = Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" \"$@\" 3<&0 4>&1 0</dev/null 1>/dev/null")
            .arg(path)
            .args(FLAGS)
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", path.display()))?;
        let input = child.stdin.take().ok_or("no pipe to Chromium")?;
        let output = child.stdout.take().ok_or("no pipe from Chromium")?;
        let (tx, messages) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(output);
            let mut buf = Vec::new();
            while reader.read_until(0, &mut buf).is_ok_and(|n| n > 0) {
                if buf.last() == Some(&0) {
                    buf.pop();
                }
                if let Ok(message) = serde_json::from_slice::<Value>(&buf)
                    && tx.send(message).is_err()
                {
                    break;
                }
                buf.clear();
            }
        });
        Ok(Self {
            child,
            input,
            messages,
            next_id: 0,
            requests: Vec::new(),
        })
    }

    /// Sends one command and waits (30 s at most) for its answer, noting the
    /// requests of the events read meanwhile.
    fn call(&mut self, method: &str, params: Value, session: Option<&str>) -> Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.input
            .write_all(&bytes)
            .and_then(|_| self.input.flush())
            .map_err(|e| format!("Chromium's pipe: {e}"))?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .messages
                .recv_timeout(left)
                .map_err(|_| format!("Chromium did not answer {method} within 30 s"))?;
            if message["method"] == "Network.requestWillBeSent"
                && let Some(url) = message["params"]["request"]["url"].as_str()
            {
                self.requests.push(url.to_string());
            }
            if message["id"] == json!(id) {
                if let Some(error) = message.get("error") {
                    return Err(format!("{method}: {error}"));
                }
                return Ok(message["result"].clone());
            }
        }
    }

    fn stop(&mut self) {
        let _ = self.call("Browser.close", json!({}), None);
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The dev server on a free port; stopped on drop.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(stoa: &std::path::Path, url: &str) -> Result<Self> {
        let addr: SocketAddr = ([127, 0, 0, 1], cmd::free_port()?).into();
        let child = Command::new(stoa)
            .args(["serve", "--bind", &addr.to_string()])
            .env("DATABASE_URL", url)
            .env("STOA_LOG", "warn")
            .env("STOA_ENV", "development")
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start stoa: {e}"))?;
        let server = Self { child, addr };
        let started = Instant::now();
        loop {
            if let Ok((200, _)) = load::once(addr, &Request::get("/api/version")) {
                return Ok(server);
            }
            if started.elapsed() > Duration::from_secs(60) {
                return Err("stoa did not answer within 60 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        cmd::terminate(self.child.id());
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes() {
        assert_eq!(base64_decode("aGVsbG8=").ok(), Some(b"hello".to_vec()));
        assert_eq!(base64_decode("aGk=").ok(), Some(b"hi".to_vec()));
        assert!(base64_decode("a*").is_err());
    }

    #[test]
    fn tags_come_from_the_operations() {
        let doc = json!({"paths": {"/a": {"get": {"tags": ["X"]}, "post": {"tags": ["Y", "X"]}}}});
        assert_eq!(document_tags(&doc), vec!["X", "Y"]);
    }
}
