//! Feature matching with `*` and `module.*` wildcards, as the reference does it.

/// Whether one grant covers `required`.
fn grant_covers(grant: &str, required: &str) -> bool {
    if grant == "*" || grant == required {
        return true;
    }
    match grant.strip_suffix(".*") {
        // `mod.*` covers `mod` and `mod.<anything>` (but not `module`).
        Some(prefix) => {
            required == prefix
                || required
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with('.'))
        }
        None => false,
    }
}

/// Whether `granted` (a caller's effective grants) covers `required`.
/// `is_super_admin` covers everything.
pub fn feature_granted<S: AsRef<str>>(granted: &[S], required: &str, is_super_admin: bool) -> bool {
    is_super_admin || granted.iter().any(|g| grant_covers(g.as_ref(), required))
}

/// Whether every feature in `required` is granted.
pub fn features_granted<S: AsRef<str>, R: AsRef<str>>(
    granted: &[S],
    required: &[R],
    is_super_admin: bool,
) -> bool {
    required
        .iter()
        .all(|r| feature_granted(granted, r.as_ref(), is_super_admin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_and_wildcards() {
        let grants = ["devices.view", "auth.*"];
        assert!(feature_granted(&grants, "devices.view", false));
        assert!(!feature_granted(&grants, "devices.manage", false));
        assert!(feature_granted(&grants, "auth.users.list", false));
        assert!(feature_granted(&grants, "auth", false));
        assert!(!feature_granted(&grants, "authx.users", false));
        assert!(!feature_granted(&grants, "auth_extra.view", false));
        assert!(feature_granted(&["*"], "anything.at.all", false));
        assert!(feature_granted::<&str>(&[], "x.y", true));
        assert!(!feature_granted::<&str>(&[], "x.y", false));
    }

    #[test]
    fn all_required() {
        let grants = ["a.*", "b.view"];
        assert!(features_granted(&grants, &["a.x", "b.view"], false));
        assert!(!features_granted(&grants, &["a.x", "b.edit"], false));
        assert!(features_granted::<&str, &str>(&grants, &[], false));
    }
}
