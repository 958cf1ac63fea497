//! A small closed-loop HTTP/1.1 load generator: N keep-alive connections, one
//! thread each, every connection sending its next request as soon as the last
//! answer arrived. Latencies are recorded per request.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// One request to repeat.
#[derive(Clone)]
pub struct Request {
    pub method: &'static str,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<(String, Vec<u8>)>,
}

impl Request {
    pub fn get(path: &str) -> Self {
        Self {
            method: "GET",
            path: path.into(),
            headers: Vec::new(),
            body: None,
        }
    }

    pub fn post(path: &str, content_type: &str, body: &str) -> Self {
        Self {
            method: "POST",
            path: path.into(),
            headers: Vec::new(),
            body: Some((content_type.into(), body.as_bytes().to_vec())),
        }
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = format!("{} {} HTTP/1.1\r\nHost: bench\r\n", self.method, self.path);
        for (k, v) in &self.headers {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        if let Some((content_type, body)) = &self.body {
            out.push_str(&format!(
                "Content-Type: {content_type}\r\nContent-Length: {}\r\n",
                body.len()
            ));
        }
        out.push_str("\r\n");
        let mut bytes = out.into_bytes();
        if let Some((_, body)) = &self.body {
            bytes.extend_from_slice(body);
        }
        bytes
    }
}

/// What one run measured.
pub struct Outcome {
    pub requests: u64,
    pub errors: u64,
    pub elapsed: Duration,
    /// Every request answered, warm-up included (for per-request ratios of
    /// server-side counters).
    pub sent_total: u64,
    /// Sorted latencies of successful requests, in microseconds.
    pub latencies_us: Vec<u64>,
}

impl Outcome {
    pub fn rps(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    pub fn percentile_ms(&self, p: f64) -> f64 {
        if self.latencies_us.is_empty() {
            return 0.0;
        }
        let idx = ((self.latencies_us.len() as f64 - 1.0) * p).round() as usize;
        self.latencies_us[idx.min(self.latencies_us.len() - 1)] as f64 / 1000.0
    }
}

/// Sends one request on a fresh connection and returns (status, body).
pub fn once(addr: SocketAddr, req: &Request) -> Result<(u16, Vec<u8>), String> {
    once_within(addr, req, Duration::from_secs(10))
}

/// [`once`] waiting at most `timeout` for each read of the answer.
pub fn once_within(
    addr: SocketAddr,
    req: &Request,
    timeout: Duration,
) -> Result<(u16, Vec<u8>), String> {
    let stream =
        TcpStream::connect_timeout(&addr, Duration::from_secs(2)).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    let mut writer = stream.try_clone().map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream);
    writer.write_all(&req.encode()).map_err(|e| e.to_string())?;
    read_response(&mut reader)
}

pub(crate) fn read_response(reader: &mut BufReader<TcpStream>) -> Result<(u16, Vec<u8>), String> {
    let mut line = String::new();
    reader.read_line(&mut line).map_err(|e| e.to_string())?;
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line: {line:?}"))?;
    let mut length = None;
    let mut chunked = false;
    loop {
        line.clear();
        reader.read_line(&mut line).map_err(|e| e.to_string())?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            } else if name.eq_ignore_ascii_case("transfer-encoding")
                && value.trim().eq_ignore_ascii_case("chunked")
            {
                chunked = true;
            }
        }
    }
    if chunked {
        return read_chunked(reader).map(|body| (status, body));
    }
    let length = length.ok_or("response without content-length")?;
    let mut body = vec![0; length];
    reader.read_exact(&mut body).map_err(|e| e.to_string())?;
    Ok((status, body))
}

/// Reads a `Transfer-Encoding: chunked` body (streamed responses such as CSV).
fn read_chunked(reader: &mut BufReader<TcpStream>) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        reader.read_line(&mut line).map_err(|e| e.to_string())?;
        let size_text = line.trim_end().split(';').next().unwrap_or("");
        let size = usize::from_str_radix(size_text.trim(), 16)
            .map_err(|_| format!("bad chunk size: {line:?}"))?;
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk).map_err(|e| e.to_string())?;
        if size == 0 {
            return Ok(body);
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

/// Drives `requests` (round-robin per connection) for `duration` after a warm-up.
pub fn drive(
    addr: SocketAddr,
    requests: &[Request],
    connections: usize,
    warmup: Duration,
    duration: Duration,
) -> Outcome {
    let encoded: Vec<Vec<u8>> = requests.iter().map(Request::encode).collect();
    let start = Instant::now();
    let measure_from = start + warmup;
    let stop_at = measure_from + duration;
    let handles: Vec<_> = (0..connections)
        .map(|worker| {
            let encoded = encoded.clone();
            std::thread::spawn(move || {
                let mut latencies = Vec::with_capacity(64 * 1024);
                let mut errors = 0u64;
                let mut sent_total = 0u64;
                let mut next = worker;
                let mut conn: Option<(TcpStream, BufReader<TcpStream>)> = None;
                while Instant::now() < stop_at {
                    if conn.is_none() {
                        conn = TcpStream::connect(addr).ok().and_then(|s| {
                            s.set_nodelay(true).ok()?;
                            s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
                            let r = BufReader::new(s.try_clone().ok()?);
                            Some((s, r))
                        });
                        if conn.is_none() {
                            errors += 1;
                            std::thread::sleep(Duration::from_millis(10));
                            continue;
                        }
                    }
                    let Some((writer, reader)) = conn.as_mut() else {
                        continue;
                    };
                    let payload = &encoded[next % encoded.len()];
                    next += 1;
                    let sent = Instant::now();
                    let result = writer
                        .write_all(payload)
                        .map_err(|e| e.to_string())
                        .and_then(|_| read_response(reader));
                    let done = Instant::now();
                    sent_total += 1;
                    let counted = sent >= measure_from && done <= stop_at;
                    match result {
                        Ok((status, _)) if status < 400 => {
                            if counted {
                                latencies.push(done.duration_since(sent).as_micros() as u64);
                            }
                        }
                        Ok(_) => {
                            if counted {
                                errors += 1;
                            }
                        }
                        Err(_) => {
                            if counted {
                                errors += 1;
                            }
                            conn = None;
                        }
                    }
                }
                (latencies, errors, sent_total)
            })
        })
        .collect();
    let mut latencies_us = Vec::new();
    let mut errors = 0;
    let mut sent_total = 0;
    for handle in handles {
        if let Ok((lat, err, sent)) = handle.join() {
            latencies_us.extend(lat);
            errors += err;
            sent_total += sent;
        }
    }
    latencies_us.sort_unstable();
    Outcome {
        requests: latencies_us.len() as u64,
        errors,
        elapsed: duration,
        sent_total,
        latencies_us,
    }
}
