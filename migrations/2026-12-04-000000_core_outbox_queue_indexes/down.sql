CREATE INDEX event_outbox_organization ON event_outbox (organization_id);
CREATE INDEX event_outbox_tenant ON event_outbox (tenant_id);
