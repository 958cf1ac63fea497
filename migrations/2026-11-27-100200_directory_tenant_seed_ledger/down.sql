DROP TABLE tenant_seed_ledger;
