//! The OTLP/HTTP (protobuf) exporter and the client it sends with.

use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use opentelemetry_http::{HttpClient, HttpError};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;

use super::TraceConfig;

/// The collector's answer to one export is a few bytes; anything past this is
/// not a collector.
const MAX_ANSWER_BYTES: usize = 64 * 1024;
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("traces: {0}")]
    Setup(String),
}

/// The tracer provider: spans batched (OTEL_BSP_* tune the batches),
/// sampled as `OTEL_TRACES_SAMPLER`/`OTEL_TRACES_SAMPLER_ARG` say (the SDK
/// reads them; the default is parent-based, always on), named by
/// `OTEL_SERVICE_NAME` or `stoa`.
pub(super) fn provider(cfg: &TraceConfig) -> Result<SdkTracerProvider, ExportError> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_endpoint(cfg.traces_url.clone())
        .with_timeout(EXPORT_TIMEOUT)
        .with_http_client(ExportClient::new()?)
        .build()
        .map_err(|e| ExportError::Setup(e.to_string()))?;
    let mut resource = Resource::builder();
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("stoa");
    }
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource.build())
        .build())
}

/// Sends the exporter's requests with our reqwest client (rustls with ring,
/// like every other outbound connection) on a runtime of its own.
///
/// The SDK's batch processor exports from a plain thread and waits on the
/// future with a minimal executor; reqwest needs a Tokio reactor, and the
/// server's actix runtimes are per worker and end with it. One small runtime,
/// kept for the life of the process, serves every export.
#[derive(Debug)]
struct ExportClient {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

impl ExportClient {
    fn new() -> Result<Self, ExportError> {
        static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
        let runtime = match RUNTIME.get() {
            Some(runtime) => runtime,
            None => {
                let built = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .thread_name("otlp-export")
                    .enable_all()
                    .build()
                    .map_err(|e| ExportError::Setup(e.to_string()))?;
                RUNTIME.get_or_init(|| built)
            }
        };
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(
                crate::outbound::tls_config().map_err(|e| ExportError::Setup(e.to_string()))?,
            )
            .no_proxy()
            .timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| ExportError::Setup(e.to_string()))?;
        Ok(Self {
            client,
            runtime: runtime.handle().clone(),
        })
    }
}

#[async_trait::async_trait]
impl HttpClient for ExportClient {
    async fn send_bytes(
        &self,
        request: http::Request<Bytes>,
    ) -> Result<http::Response<Bytes>, HttpError> {
        let client = self.client.clone();
        let task = self.runtime.spawn(async move {
            let request = reqwest::Request::try_from(request)?;
            let mut response = client.execute(request).await?;
            let status = response.status();
            let headers = std::mem::take(response.headers_mut());
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                    return Err::<_, HttpError>("the collector's answer is too large".into());
                }
                body.extend_from_slice(&chunk);
            }
            let mut answer = http::Response::builder()
                .status(status)
                .body(Bytes::from(body))?;
            *answer.headers_mut() = headers;
            Ok(answer)
        });
        task.await?
    }
}
