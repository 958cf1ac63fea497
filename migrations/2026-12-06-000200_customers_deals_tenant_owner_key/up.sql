-- A deal's owner is checked within its tenant, as its stage and pipeline are
-- (customers_deals_tenant_foreign_keys): the foreign key includes tenant_id,
-- so the database itself refuses another tenant's user (or a user of no
-- tenant) as owner, and the check a user deletion makes uses
-- customer_deals_owner, which starts with (tenant_id, owner_user_id). The
-- single-column index the old key needed goes: every deal a bulk job
-- changes wrote an entry into it.
ALTER TABLE users ADD CONSTRAINT users_tenant_id_id_key UNIQUE (tenant_id, id);
ALTER TABLE customer_deals
    ADD CONSTRAINT customer_deals_tenant_owner_fkey FOREIGN KEY (tenant_id, owner_user_id)
        REFERENCES users (tenant_id, id),
    DROP CONSTRAINT customer_deals_owner_user_id_fkey;
DROP INDEX customer_deals_owner_fk;
