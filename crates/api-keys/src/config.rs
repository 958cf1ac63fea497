//! Settings of the API-key module, read from the environment.

use std::time::Duration;

use std::collections::HashMap;
use stoa_core::config::FromEnv;
use stoa_core::config::{ConfigError, Env};

/// The default interval of the `lastUsedAt` flush (the reference writes it at
/// most once a minute per key).
pub const DEFAULT_FLUSH_SECS: u64 = 60;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiKeysConfig {
    /// How often recorded key uses are written as `last_used_at`
    /// (`STOA_API_KEY_LAST_USED_FLUSH_SECS`, default 60, at least 1).
    pub last_used_flush: Duration,
}

impl Default for ApiKeysConfig {
    fn default() -> Self {
        Self {
            last_used_flush: Duration::from_secs(DEFAULT_FLUSH_SECS),
        }
    }
}

impl FromEnv for ApiKeysConfig {
    fn from_vars(vars: &HashMap<String, String>) -> Result<Self, ConfigError> {
        let env = Env(vars);
        let secs: u64 = env.parse_or("STOA_API_KEY_LAST_USED_FLUSH_SECS", DEFAULT_FLUSH_SECS)?;
        if secs == 0 {
            return Err(ConfigError {
                var: "STOA_API_KEY_LAST_USED_FLUSH_SECS",
                message: "must be at least 1".into(),
            });
        }
        Ok(Self {
            last_used_flush: Duration::from_secs(secs),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flush_interval_from_the_environment() {
        let vars = |v: &str| {
            [(
                "STOA_API_KEY_LAST_USED_FLUSH_SECS".to_string(),
                v.to_string(),
            )]
            .into_iter()
            .collect()
        };
        assert_eq!(
            ApiKeysConfig::from_vars(&Default::default()).ok(),
            Some(ApiKeysConfig::default())
        );
        assert_eq!(
            ApiKeysConfig::from_vars(&vars("5")).map(|c| c.last_used_flush),
            Ok(Duration::from_secs(5))
        );
        for bad in ["0", "-1", "soon"] {
            let err = ApiKeysConfig::from_vars(&vars(bad)).err();
            assert_eq!(
                err.map(|e| e.var),
                Some("STOA_API_KEY_LAST_USED_FLUSH_SECS"),
                "{bad}"
            );
        }
    }
}
