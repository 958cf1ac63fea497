//! Settings of the attachments module, read from the environment
//! (documented in docs/operations.md).

use std::collections::HashMap;

use stoa_core::config::{ConfigError, Env};

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
        }
    }
}

fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

impl AttachmentsConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_vars(&std::env::vars().collect())
    }

    pub fn from_vars(vars: &HashMap<String, String>) -> Result<Self, ConfigError> {
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
        Ok(Self {
            max_upload_bytes: mib("OM_ATTACHMENT_MAX_UPLOAD_MB", defaults.max_upload_bytes)?,
            tenant_quota_bytes: mib("OM_ATTACHMENT_TENANT_QUOTA_MB", defaults.tenant_quota_bytes)?,
            partitions_locked: env.flag("DEMO_MODE", false)?
                || env.flag("SELF_SERVICE_ONBOARDING_ENABLED", false)?,
            default_requires_ocr: env.flag("OM_DEFAULT_ATTACHMENT_OCR_ENABLED", true)?,
            image_workers: workers.max(1),
            max_image_pixels: pixels.max(1),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

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
}
