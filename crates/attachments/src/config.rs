//! Settings of the attachments module, read from the environment
//! (documented in docs/operations.md).

use std::collections::HashMap;

use stoa_core::config::FromEnv;
use stoa_core::config::{ConfigError, Env};
use stoa_core::rate_limit::Rule;

const MIB: u64 = 1024 * 1024;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttachmentsConfig {
    /// Largest file one upload may carry (`OM_ATTACHMENT_MAX_UPLOAD_MB`, default 25).
    pub max_upload_bytes: u64,
    /// Bytes of attachments one tenant may keep (`OM_ATTACHMENT_TENANT_QUOTA_MB`, default 512).
    pub tenant_quota_bytes: u64,
    /// Partition writes refused with 403: `DEMO_MODE=true` or
    /// `SELF_SERVICE_ONBOARDING_ENABLED=true` (unset means unlocked).
    pub partitions_locked: bool,
    /// Whether new partitions extract text by default
    /// (`OM_DEFAULT_ATTACHMENT_OCR_ENABLED`, default true).
    pub default_requires_ocr: bool,
    /// Concurrent image renders (`OM_ATTACHMENT_IMAGE_WORKERS`, default: the
    /// number of CPUs); further requests wait for a slot.
    pub image_workers: usize,
    /// Largest decoded image, in pixels (`OM_ATTACHMENT_MAX_IMAGE_PIXELS`,
    /// default 40,000,000), checked from the header before decoding.
    pub max_image_pixels: u64,
    /// Variants stored per image (`OM_ATTACHMENT_IMAGE_MAX_VARIANTS`,
    /// default 16): past it, new sizes are rendered (throttled) but not
    /// kept, so an image's variants never take more than this many objects.
    pub max_variants_per_image: usize,
    /// The only widths and heights served (`OM_ATTACHMENT_IMAGE_SIZES`, a
    /// comma-separated list of pixels); `None` (unset) = any side 1..=4000.
    pub image_sizes: Option<Vec<u32>>,
    /// Renders of variants not stored yet, per client address
    /// (`RATE_LIMIT_ATTACHMENT_RENDERS`, `N` or `N/SECONDS`, default 60 per
    /// 60 s); cached variants are never throttled.
    pub renders_per_client: Rule,
    /// `RATE_LIMIT_ENABLED` (default true); `false` turns the render throttle off.
    pub rate_limit_enabled: bool,
    /// `RATE_LIMIT_TRUST_PROXY_DEPTH`: reverse proxies setting `X-Forwarded-For`.
    pub trust_proxy_depth: usize,
}

impl Default for AttachmentsConfig {
    fn default() -> Self {
        Self {
            max_upload_bytes: 25 * MIB,
            tenant_quota_bytes: 512 * MIB,
            partitions_locked: false,
            default_requires_ocr: true,
            image_workers: default_workers(),
            max_image_pixels: 40_000_000,
            max_variants_per_image: 16,
            image_sizes: None,
            renders_per_client: Rule::per_minute(60),
            rate_limit_enabled: true,
            trust_proxy_depth: 0,
        }
    }
}

fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// `320, 640,1280` → sorted, deduplicated sides, each 1..=4000.
fn parse_sizes(list: &str) -> Result<Vec<u32>, String> {
    let mut sizes = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.parse::<u32>() {
            Ok(n) if (1..=crate::images::MAX_SIDE).contains(&n) => sizes.push(n),
            _ => {
                return Err(format!(
                    "expected a comma-separated list of sizes 1..={}, got `{item}`",
                    crate::images::MAX_SIDE
                ));
            }
        }
    }
    if sizes.is_empty() {
        return Err("must list at least one size".into());
    }
    sizes.sort_unstable();
    sizes.dedup();
    Ok(sizes)
}

impl FromEnv for AttachmentsConfig {
    fn from_vars(vars: &HashMap<String, String>) -> Result<Self, ConfigError> {
        let env = Env(vars);
        let defaults = Self::default();
        let mib = |var: &'static str, default: u64| -> Result<u64, ConfigError> {
            let value: u64 = env.parse_or(var, default / MIB)?;
            if value == 0 {
                return Err(ConfigError {
                    var,
                    message: "must be at least 1".into(),
                });
            }
            Ok(value.saturating_mul(MIB))
        };
        let workers: usize = env.parse_or("OM_ATTACHMENT_IMAGE_WORKERS", defaults.image_workers)?;
        let pixels: u64 =
            env.parse_or("OM_ATTACHMENT_MAX_IMAGE_PIXELS", defaults.max_image_pixels)?;
        let variants: usize = env.parse_or(
            "OM_ATTACHMENT_IMAGE_MAX_VARIANTS",
            defaults.max_variants_per_image,
        )?;
        let image_sizes = match env.get("OM_ATTACHMENT_IMAGE_SIZES").map(str::trim) {
            None | Some("") => None,
            Some(list) => Some(parse_sizes(list).map_err(|message| ConfigError {
                var: "OM_ATTACHMENT_IMAGE_SIZES",
                message,
            })?),
        };
        Ok(Self {
            max_upload_bytes: mib("OM_ATTACHMENT_MAX_UPLOAD_MB", defaults.max_upload_bytes)?,
            tenant_quota_bytes: mib("OM_ATTACHMENT_TENANT_QUOTA_MB", defaults.tenant_quota_bytes)?,
            partitions_locked: env.flag("DEMO_MODE", false)?
                || env.flag("SELF_SERVICE_ONBOARDING_ENABLED", false)?,
            default_requires_ocr: env.flag("OM_DEFAULT_ATTACHMENT_OCR_ENABLED", true)?,
            image_workers: workers.max(1),
            max_image_pixels: pixels.max(1),
            max_variants_per_image: variants,
            image_sizes,
            renders_per_client: env
                .parse_or("RATE_LIMIT_ATTACHMENT_RENDERS", defaults.renders_per_client)?,
            rate_limit_enabled: env.flag("RATE_LIMIT_ENABLED", true)?,
            trust_proxy_depth: env.parse_or("RATE_LIMIT_TRUST_PROXY_DEPTH", 0usize)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stoa_core::config::vars;

    #[test]
    fn defaults_and_overrides() {
        let config = AttachmentsConfig::from_vars(&vars(&[])).unwrap();
        assert_eq!(config.max_upload_bytes, 25 * MIB);
        assert_eq!(config.tenant_quota_bytes, 512 * MIB);
        assert!(!config.partitions_locked, "unset DEMO_MODE does not lock");
        let config = AttachmentsConfig::from_vars(&vars(&[
            ("OM_ATTACHMENT_MAX_UPLOAD_MB", "2"),
            ("OM_ATTACHMENT_TENANT_QUOTA_MB", "3"),
            ("DEMO_MODE", "true"),
        ]))
        .unwrap();
        assert_eq!(config.max_upload_bytes, 2 * MIB);
        assert_eq!(config.tenant_quota_bytes, 3 * MIB);
        assert!(config.partitions_locked);
        let onboarding =
            AttachmentsConfig::from_vars(&vars(&[("SELF_SERVICE_ONBOARDING_ENABLED", "true")]))
                .unwrap();
        assert!(onboarding.partitions_locked);
        assert!(
            AttachmentsConfig::from_vars(&vars(&[("OM_ATTACHMENT_MAX_UPLOAD_MB", "0")])).is_err()
        );
        assert!(AttachmentsConfig::from_vars(&vars(&[("DEMO_MODE", "maybe")])).is_err());
    }

    #[test]
    fn image_limits_parse_and_bad_values_are_refused() {
        let config = AttachmentsConfig::from_vars(&vars(&[])).unwrap();
        assert_eq!(config.max_variants_per_image, 16);
        assert_eq!(config.image_sizes, None);
        assert_eq!(config.renders_per_client, Rule::per_minute(60));
        let config = AttachmentsConfig::from_vars(&vars(&[
            ("OM_ATTACHMENT_IMAGE_MAX_VARIANTS", "4"),
            ("OM_ATTACHMENT_IMAGE_SIZES", "640, 320,320"),
            ("RATE_LIMIT_ATTACHMENT_RENDERS", "5/30"),
        ]))
        .unwrap();
        assert_eq!(config.max_variants_per_image, 4);
        assert_eq!(config.image_sizes, Some(vec![320, 640]));
        assert_eq!(config.renders_per_client.limit, 5);
        for bad in [
            ("OM_ATTACHMENT_IMAGE_SIZES", "320,5000"),
            ("OM_ATTACHMENT_IMAGE_SIZES", "x"),
            ("OM_ATTACHMENT_IMAGE_SIZES", ","),
            ("OM_ATTACHMENT_IMAGE_MAX_VARIANTS", "-1"),
            ("RATE_LIMIT_ATTACHMENT_RENDERS", "0"),
        ] {
            assert!(
                AttachmentsConfig::from_vars(&vars(&[bad])).is_err(),
                "{bad:?}"
            );
        }
    }
}
