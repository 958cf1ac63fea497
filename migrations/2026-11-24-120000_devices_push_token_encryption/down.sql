DROP INDEX user_devices_push_token_pending;
DROP INDEX user_devices_push_token_hash;
ALTER TABLE user_devices
    DROP COLUMN push_token_fingerprint,
    DROP COLUMN push_token_hash;
