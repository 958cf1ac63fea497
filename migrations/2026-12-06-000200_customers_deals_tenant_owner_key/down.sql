CREATE INDEX customer_deals_owner_fk ON customer_deals (owner_user_id);
ALTER TABLE customer_deals
    ADD CONSTRAINT customer_deals_owner_user_id_fkey FOREIGN KEY (owner_user_id) REFERENCES users (id),
    DROP CONSTRAINT customer_deals_tenant_owner_fkey;
ALTER TABLE users DROP CONSTRAINT users_tenant_id_id_key;
