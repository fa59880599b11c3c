-- +goose Up
-- Finished deliveries are pruned after betaport.DeliveryRetention: the
-- prune finds them by age, and an event's remaining deliveries by event.
CREATE INDEX webhook_deliveries_age ON webhook_deliveries (created_at);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
CREATE INDEX webhook_events_age ON webhook_events (created_at);

-- +goose Down
DROP INDEX webhook_events_age;
DROP INDEX webhook_deliveries_event;
DROP INDEX webhook_deliveries_age;
