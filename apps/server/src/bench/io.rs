//! `stoa io-bench`: what the I/O helpers of stoa-core cost (streamed uploads
//! into storage, `Money` parsing). It measures stoa-core from outside, with
//! the real multipart stream, so it lives with the benchmark commands rather
//! than in the crate.

use crate::commands::CommandError;

/// `stoa io-bench` (hidden, for `cargo xtask bench`): streams a `mib` MiB
/// multipart upload through `stoa_core::upload::receive` into a local store
/// in a temporary directory. Prints one JSON line: MiB/s, the growth of the
/// process's peak RSS during the upload in MiB (it stays near the store's
/// part buffer, whatever the file size) and microseconds per `Money` parse +
/// format.
pub async fn io_bench(mib: u64) -> Result<(), CommandError> {
    use actix_web::web::Bytes;
    use futures_util::StreamExt;
    use stoa_core::upload::actix_multipart::Multipart;
    use stoa_core::upload::{UploadPolicy, receive};
    let other = |e: String| CommandError::Other(e);
    let dir = std::env::temp_dir().join(format!("stoa-io-bench-{}", uuid::Uuid::new_v4()));
    let storage = stoa_core::storage::Storage::local(&dir).map_err(|e| other(e.to_string()))?;
    let boundary = "stoa-io-bench";
    let head = Bytes::from(format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"bench.bin\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n"
    ));
    let tail = Bytes::from(format!("\r\n--{boundary}--\r\n"));
    let chunk = Bytes::from(vec![0x5a_u8; 64 * 1024]);
    let chunks = usize::try_from(mib * 16).map_err(|e| other(e.to_string()))?;
    let length = head.len() + tail.len() + chunks * chunk.len();
    let body = futures_util::stream::iter(
        std::iter::once(head)
            .chain(std::iter::repeat_n(chunk, chunks))
            .chain(std::iter::once(tail)),
    )
    .map(Ok::<_, actix_web::error::PayloadError>);
    let req = actix_web::test::TestRequest::post()
        .insert_header((
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        ))
        .insert_header(("content-length", length.to_string()))
        .to_http_request();
    let payload = Multipart::new(req.headers(), body);
    let peak_before = peak_rss_mib();
    let started = std::time::Instant::now();
    let upload = receive(
        &req,
        payload,
        &storage,
        &UploadPolicy::single(mib * 1024 * 1024),
        |_| stoa_core::storage::key(["bench", "upload.bin"]),
    )
    .await
    .map_err(|e| other(e.to_string()));
    let elapsed = started.elapsed().as_secs_f64();
    let peak_growth = peak_rss_mib() - peak_before;
    let _ = std::fs::remove_dir_all(&dir);
    let upload = upload?;
    if upload.files.first().map(|f| f.size) != Some(mib * 1024 * 1024) {
        return Err(other("the upload did not store the whole file".into()));
    }
    let rounds = 200_000u32;
    let started = std::time::Instant::now();
    let mut total = 0usize;
    for i in 0..rounds {
        let text = format!("{}.{:04}", 12_345 + i, i % 10_000);
        let money: stoa_core::money::Money = text.parse().map_err(|e| other(format!("{e}")))?;
        total += money.to_string().len();
    }
    let per_money = started.elapsed().as_secs_f64() * 1e6 / f64::from(rounds);
    std::hint::black_box(total);
    let rate = mib as f64 / elapsed;
    println!(
        r#"{{"uploadMibPerSec":{rate:.1},"uploadPeakGrowthMib":{peak_growth:.1},"usPerMoney":{per_money:.3}}}"#
    );
    Ok(())
}

/// The process's peak resident set (VmHWM) in MiB; 0 where /proc is missing.
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}
