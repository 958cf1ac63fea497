//! Serde helpers: request bodies ([`double_option`]) and the one timestamp
//! format of every JSON body ([`timestamp`]).

pub mod timestamp;

use serde::{Deserialize, Deserializer};

/// For `Option<Option<T>>` fields with `#[serde(default, deserialize_with = ...)]`:
/// an absent field stays `None` (keep the stored value), `null` becomes
/// `Some(None)` (clear it) and a value becomes `Some(Some(v))`.
pub fn double_option<'de, T, D>(de: D) -> Result<Option<Option<T>>, D::Error>
where
    T: Deserialize<'de>,
    D: Deserializer<'de>,
{
    Option::<T>::deserialize(de).map(Some)
}
