-- The ingress caches each program's webhook signing secrets (services/ingress/tracking-cache.ts): a new,
-- rolled or removed connection evicts its workspace's entries through the invalidation log, like links and
-- programs do.
create function log_processor_connection_change() returns trigger language plpgsql as $$
begin
  insert into cache_invalidations (kind, key) values ('processor_connection', coalesce(new.workspace_id, old.workspace_id)::text);
  return null;
end $$;
create trigger processor_connections_changed after insert or update or delete on processor_connections
  for each row execute function log_processor_connection_change();
