DROP FUNCTION IF EXISTS stoa_bump_acl_version();
DROP TABLE IF EXISTS acl_version;
