use super::*;

#[test]
fn missing_database_url_names_the_variable() {
    let err = Config::from_vars(&vars(&[])).err();
    assert_eq!(err.map(|e| e.var), Some("DATABASE_URL"));
}

#[test]
fn malformed_values_name_the_variable() {
    for (var, value) in [
        ("STOA_BIND", "not-an-address"),
        ("STOA_DB_POOL_SIZE", "many"),
        ("STOA_DB_POOL_SIZE", "0"),
        ("STOA_LOG_FORMAT", "xml"),
        ("STOA_CORS_ORIGINS", "example.com"),
        ("STOA_METRICS_BIND", "9090"),
        ("APP_URL", "app.example.com"),
        ("STOA_SSE_KEEP_ALIVE_SECS", "0"),
        ("STOA_SSE_KEEP_ALIVE_SECS", "soon"),
        ("STOA_OUTBOUND_ALLOW", "10.0.0.0/40"),
        ("STOA_OUTBOUND_ALLOW", "intranet"),
        ("STOA_OUTBOUND_IDLE_TIMEOUT_MS", "0"),
        ("STOA_OUTBOUND_FIRST_BYTE_TIMEOUT_MS", "0"),
        ("STOA_OUTBOUND_MAX_RESPONSE_BYTES", "lots"),
        ("STOA_S3_ENDPOINT", "minio:9000"),
    ] {
        let err = Config::from_vars(&vars(&[("DATABASE_URL", "postgres://x"), (var, value)]))
            .err()
            .map(|e| e.var);
        assert_eq!(err, Some(var), "{var}={value}");
    }
}

#[test]
fn defaults_apply_and_secrets_are_redacted() {
    let cfg = Config::from_vars(&vars(&[("DATABASE_URL", "postgres://u:pw@h/db")]));
    let cfg = match cfg {
        Ok(cfg) => cfg,
        Err(err) => panic!("{err}"),
    };
    assert_eq!(cfg.http.bind.to_string(), DEFAULT_BIND);
    assert_eq!(cfg.http.body_limit, DEFAULT_BODY_LIMIT);
    assert_eq!(cfg.http.sse_keep_alive, Duration::from_secs(15));
    assert!(cfg.http.metrics_bind.is_none());
    assert!(!format!("{cfg:?}").contains("pw"));
    assert!(cfg.outbound.allow.is_empty());
    assert!(matches!(
        &cfg.storage,
        crate::storage::StorageConfig::Local { dir } if dir.as_os_str() == "data"
    ));
}

#[test]
fn s3_settings_select_s3_and_hide_the_secret() {
    let cfg = Config::from_vars(&vars(&[
        ("DATABASE_URL", "postgres://x"),
        ("STOA_S3_BUCKET", "files"),
        ("STOA_S3_ENDPOINT", "http://127.0.0.1:9000"),
        ("STOA_S3_ACCESS_KEY_ID", "id"),
        ("STOA_S3_SECRET_ACCESS_KEY", "very-secret"),
        ("STOA_OUTBOUND_ALLOW", "10.0.0.0/8, 127.0.0.1"),
    ]));
    let cfg = match cfg {
        Ok(cfg) => cfg,
        Err(err) => panic!("{err}"),
    };
    assert_eq!(cfg.outbound.allow.len(), 2);
    match &cfg.storage {
        crate::storage::StorageConfig::S3(s3) => {
            assert_eq!(s3.bucket, "files");
            assert_eq!(s3.region, "us-east-1");
        }
        other => panic!("expected S3, got {other:?}"),
    }
    assert!(!format!("{cfg:?}").contains("very-secret"));
    let half = Config::from_vars(&vars(&[
        ("DATABASE_URL", "postgres://x"),
        ("STOA_S3_BUCKET", "files"),
        ("STOA_S3_ACCESS_KEY_ID", "id"),
    ]));
    assert_eq!(half.err().map(|e| e.var), Some("STOA_S3_SECRET_ACCESS_KEY"));
    let no_bucket = Config::from_vars(&vars(&[
        ("DATABASE_URL", "postgres://x"),
        ("STOA_S3_REGION", "eu-west-1"),
    ]));
    assert_eq!(no_bucket.err().map(|e| e.var), Some("STOA_S3_BUCKET"));
}

#[test]
fn flags_parse_common_spellings() {
    let map = vars(&[("A", "off"), ("B", "YES"), ("C", "maybe")]);
    let env = Env(&map);
    assert_eq!(env.flag("A", true), Ok(false));
    assert_eq!(env.flag("B", false), Ok(true));
    assert!(env.flag("C", false).is_err());
    assert_eq!(env.flag("D", true), Ok(true));
}
