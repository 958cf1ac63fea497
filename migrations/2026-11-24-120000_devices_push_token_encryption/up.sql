-- Push tokens are encrypted at rest (stoa_core::crypto, AES-256-GCM):
-- `push_token` holds `enc:v1:<key id>:<base64>` once a row is rewritten.
-- `push_token_hash` is a keyed hash (HMAC-SHA256, `<key id>:<hex>`) that
-- finds a device by its token without decrypting every row, and
-- `push_token_fingerprint` is what action-log snapshots show (the last 8
-- characters, at most half of a short token), computed when a token is stored.
ALTER TABLE user_devices
    ADD COLUMN push_token_hash text,
    ADD COLUMN push_token_fingerprint text;

-- Rows stored before encryption still hold the plaintext: their fingerprint
-- can be computed here. Encrypting them needs the key, which SQL does not
-- have: `stoa serve` rewrites them at start (stoa_devices::reencrypt_push_tokens),
-- and any write of a device rewrites its token too.
UPDATE user_devices
   SET push_token_fingerprint = right(push_token, least(8, length(push_token) / 2))
 WHERE push_token IS NOT NULL;

-- Lookups by token are per tenant.
CREATE INDEX user_devices_push_token_hash ON user_devices (tenant_id, push_token_hash)
    WHERE push_token_hash IS NOT NULL;
-- Finds the rows still in plaintext (no hash yet).
CREATE INDEX user_devices_push_token_pending ON user_devices (id)
    WHERE push_token IS NOT NULL AND push_token_hash IS NULL;
