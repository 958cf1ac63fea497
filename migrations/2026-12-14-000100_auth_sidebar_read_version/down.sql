SELECT stoa_drop_read_version_triggers('user_sidebar_preferences');
SELECT stoa_drop_read_version_triggers('role_sidebar_preferences');
