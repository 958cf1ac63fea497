//! The per-process ACL cache, keyed by user and selection and tagged with the
//! database's `acl_version`. Any ACL-relevant write (in any process) bumps the
//! version; the per-request session check reads it, so a stale entry is never
//! served. Entries are dropped wholesale on a version change or when the cache
//! grows past its bound.

use std::collections::HashMap;
use std::sync::RwLock;

use uuid::Uuid;

use crate::acl::{Resolved, Selection};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey {
    pub user_id: Uuid,
    pub tenant_id: Option<Uuid>,
    pub home_organization_id: Option<Uuid>,
    pub selection: Selection,
}

const MAX_ENTRIES: usize = 50_000;

#[derive(Default)]
struct Inner {
    version: i64,
    entries: HashMap<CacheKey, Resolved>,
}

#[derive(Default)]
pub struct AclCache {
    inner: RwLock<Inner>,
}

impl AclCache {
    pub fn get(&self, version: i64, key: &CacheKey) -> Option<Resolved> {
        let inner = self.inner.read().unwrap_or_else(|e| e.into_inner());
        if inner.version != version {
            return None;
        }
        inner.entries.get(key).cloned()
    }

    /// Stores a resolution made after reading `version`. A resolution older than
    /// what the cache already holds is not stored.
    pub fn put(&self, version: i64, key: CacheKey, value: Resolved) {
        let mut inner = self.inner.write().unwrap_or_else(|e| e.into_inner());
        if version < inner.version {
            return;
        }
        if version > inner.version || inner.entries.len() >= MAX_ENTRIES {
            inner.entries.clear();
            inner.version = version;
        }
        inner.entries.insert(key, value);
    }

    pub fn len(&self) -> usize {
        self.inner.read().map(|i| i.entries.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
