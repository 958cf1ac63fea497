DROP TABLE role_grant_ledger;
