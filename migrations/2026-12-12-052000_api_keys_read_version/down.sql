DROP TRIGGER api_keys_read_version_delete ON api_keys;
DROP TRIGGER api_keys_read_version_update ON api_keys;
DROP TRIGGER api_keys_read_version_insert ON api_keys;
DELETE FROM read_versions WHERE name = 'api_keys.keys' OR starts_with(name, 'api_keys.keys@');
