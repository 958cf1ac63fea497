//! The drills' HTTP client: requests, logins and the deal and job calls
//! every drill makes.

use super::*;

/// A request with a bearer token and, when given, a JSON body.
pub fn api(method: &'static str, path: &str, token: &str, body: Option<&Value>) -> Request {
    let mut r = Request {
        method,
        path: path.to_string(),
        headers: vec![("Authorization".into(), format!("Bearer {token}"))],
        body: None,
    };
    if let Some(body) = body {
        r.body = Some(("application/json".into(), body.to_string().into_bytes()));
    }
    r
}

/// Sends `req`; (status, JSON body or `Null`).
pub fn call(addr: SocketAddr, req: &Request) -> Result<(u16, Value)> {
    let (status, body) = load::once(addr, req)?;
    Ok((status, serde_json::from_slice(&body).unwrap_or(Value::Null)))
}

/// `call` that insists on `expected`.
pub fn expect(addr: SocketAddr, req: &Request, expected: u16) -> Result<Value> {
    let (status, json) = call(addr, req)?;
    if status == expected {
        Ok(json)
    } else {
        Err(format!(
            "{} {} answered {status} (expected {expected}): {json}",
            req.method, req.path
        ))
    }
}

/// Signs in with the demo password and returns the access token.
pub fn login(addr: SocketAddr, email: &str) -> Result<String> {
    let form = format!("email={}&password=secret", email.replace('@', "%40"));
    let req = Request::post(
        "/api/auth/login",
        "application/x-www-form-urlencoded",
        &form,
    );
    let json = expect(addr, &req, 200)?;
    json["token"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("login answer without a token: {json}"))
}

/// The id of the demo pipeline stage labelled `label`.
pub fn stage(addr: SocketAddr, token: &str, label: &str) -> Result<String> {
    let stages = expect(
        addr,
        &api("GET", "/api/customers/pipeline-stages", token, None),
        200,
    )?;
    stages["items"]
        .as_array()
        .and_then(|items| items.iter().find(|s| s["label"] == label))
        .and_then(|s| s["id"].as_str())
        .map(String::from)
        .ok_or_else(|| format!("no demo stage {label}: {stages}"))
}

/// Up to `wanted` deal ids in stage `stage_id`, read through the list by cursor.
pub fn deal_ids(
    addr: SocketAddr,
    token: &str,
    stage_id: &str,
    wanted: usize,
) -> Result<Vec<String>> {
    let mut ids = Vec::with_capacity(wanted);
    let mut cursor: Option<String> = None;
    while ids.len() < wanted {
        let mut path = format!(
            "/api/customers/deals?pipelineStageId={stage_id}&pageSize=100&includeTotal=false"
        );
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let page = expect(addr, &api("GET", &path, token, None), 200)?;
        let items = page["items"].as_array().cloned().unwrap_or_default();
        ids.extend(
            items
                .iter()
                .filter_map(|d| d["id"].as_str().map(String::from)),
        );
        cursor = page["nextCursor"].as_str().map(String::from);
        if cursor.is_none() {
            break;
        }
    }
    ids.truncate(wanted);
    Ok(ids)
}

/// Starts `POST /api/customers/deals/bulk-update-stage`; returns the
/// progress job's id.
pub fn bulk_stage(addr: SocketAddr, token: &str, ids: &[String], stage_id: &str) -> Result<String> {
    let body = serde_json::json!({"ids": ids, "pipelineStageId": stage_id});
    let json = expect(
        addr,
        &api(
            "POST",
            "/api/customers/deals/bulk-update-stage",
            token,
            Some(&body),
        ),
        201,
    )?;
    json["progressJobId"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("bulk-update-stage answered without a job: {json}"))
}

/// The progress record of a job.
pub fn progress(addr: SocketAddr, token: &str, job: &str) -> Result<Value> {
    expect(
        addr,
        &api("GET", &format!("/api/progress/jobs/{job}"), token, None),
        200,
    )
}

/// Polls a progress record until it is `completed` (error on failed,
/// cancelled or the deadline).
pub fn wait_completed(addr: SocketAddr, token: &str, job: &str, within: Duration) -> Result<Value> {
    let started = Instant::now();
    loop {
        let p = progress(addr, token, job)?;
        match p["status"].as_str() {
            Some("completed") => return Ok(p),
            Some("failed" | "cancelled") => return Err(format!("job {job} ended: {p}")),
            _ => {}
        }
        if started.elapsed() > within {
            return Err(format!("job {job} not completed within {within:?}: {p}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
