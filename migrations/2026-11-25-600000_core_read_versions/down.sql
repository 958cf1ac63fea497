DROP FUNCTION stoa_bump_read_version();
DROP TABLE read_versions;
