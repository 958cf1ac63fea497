//! The opaque keyset cursor: base64url JSON naming the list and sort it
//! belongs to, the rows before the page it opens and the last sort key seen.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::AppError;

/// Longest cursor accepted (a sort key of a few short values fits easily).
const MAX_CURSOR_LEN: usize = 2048;

#[derive(Serialize, Deserialize)]
struct Wire<K> {
    /// Format version.
    v: u8,
    /// The list and sort this cursor belongs to.
    s: String,
    /// Rows before the page the cursor opens.
    o: u64,
    /// Sort key of the last row seen.
    k: K,
}

fn bad_cursor() -> AppError {
    AppError::bad_request("Invalid query parameters: cursor: not a cursor of this list")
}

/// Encodes a cursor for the list `tag` (e.g. `auth.users:email`).
pub fn encode_cursor<K: Serialize>(tag: &str, offset: u64, key: &K) -> Option<String> {
    let wire = Wire {
        v: 1,
        s: tag.to_string(),
        o: offset,
        k: key,
    };
    serde_json::to_vec(&wire)
        .ok()
        .map(|json| URL_SAFE_NO_PAD.encode(json))
}

/// Decodes a cursor of the list `tag`: `(rows before the page, last key)`.
pub fn decode_cursor<K: DeserializeOwned>(tag: &str, raw: &str) -> Result<(u64, K), AppError> {
    if raw.len() > MAX_CURSOR_LEN {
        return Err(bad_cursor());
    }
    let json = URL_SAFE_NO_PAD
        .decode(raw.trim())
        .map_err(|_| bad_cursor())?;
    let wire: Wire<K> = serde_json::from_slice(&json).map_err(|_| bad_cursor())?;
    if wire.v != 1 || wire.s != tag || wire.o > (1 << 40) {
        return Err(bad_cursor());
    }
    Ok((wire.o, wire.k))
}
