DROP TABLE IF EXISTS user_devices;
