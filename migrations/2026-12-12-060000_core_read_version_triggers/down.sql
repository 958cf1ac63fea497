DROP FUNCTION stoa_drop_read_version_triggers(regclass);
DROP FUNCTION stoa_read_version_triggers(regclass, text);
