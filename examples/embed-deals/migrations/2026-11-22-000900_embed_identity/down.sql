DROP TABLE users;
DROP TABLE organizations;
DROP TABLE tenants;
