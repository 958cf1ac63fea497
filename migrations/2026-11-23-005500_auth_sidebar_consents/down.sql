DROP TABLE IF EXISTS user_consents;
DROP TABLE IF EXISTS sidebar_variants;
DROP TABLE IF EXISTS role_sidebar_preferences;
DROP TABLE IF EXISTS user_sidebar_preferences;
