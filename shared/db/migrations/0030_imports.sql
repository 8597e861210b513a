-- Importers (CONTRACT part five; docs/importing.md): a program brought over from Rewardful, Dub or a CSV file,
-- one source page per Kafka command, resumable from its last completed page, runnable twice.

-- One import of a program. `step` and `cursor` say where the source is read next (the adapter's step, its
-- page cursor within it: null is the step's first page); `seq` is the number of the command the import
-- waits for: a page applied moves it on in the page's transaction, so a command delivered again (its seq
-- is behind) changes nothing. `credentials` are AES-256-GCM ciphertext (shared/importing/secrets.ts),
-- `csv` the uploaded file: both are deleted when the import ends.
create table imports (
  id            bigserial primary key,
  program_id    bigint not null references programs (id),
  source        text not null check (source in ('rewardful', 'dub', 'csv')),
  status        text not null default 'queued'
                check (status in ('queued', 'running', 'completed', 'failed', 'canceled')),
  step          text not null,
  cursor        text,
  seq           integer not null default 0,
  dry_run       boolean not null default false,
  options       jsonb not null default '{}',
  credentials   bytea,
  csv           text,
  counts        jsonb not null default '{}',
  error         text,
  created_at    timestamptz not null default now(),
  started_at    timestamptz,
  finished_at   timestamptz,
  updated_at    timestamptz not null default now(),
  check (status in ('queued', 'running') or (credentials is null and csv is null))
);
create index imports_program on imports (program_id, id desc);

-- Every row an import skipped or could not bring, with its code (docs/importing.md "Error codes"). A page
-- applied again (it never is: its seq moved on) would write nothing twice.
create table import_errors (
  id           bigserial primary key,
  import_id    bigint not null references imports (id),
  kind         text not null,
  external_id  text not null default '',
  code         text not null,
  message      text not null,
  created_at   timestamptz not null default now(),
  unique (import_id, kind, external_id, code)
);

-- Twice is once: each imported row keeps (source, kind, external_id) once per program, with the row it
-- became here and a fingerprint of what the source said, so a later run creates nothing and updates only
-- what changed at the source. A dry run writes its own rows (dry_run_of), so its later steps find what
-- its earlier ones would have created; they go when the dry run ends.
create table import_refs (
  program_id   bigint not null references programs (id),
  source       text not null,
  kind         text not null check (kind in ('group', 'partner', 'link', 'code', 'customer', 'commission')),
  external_id  text not null,
  local_id     bigint not null,
  fingerprint  text not null default '',
  import_id    bigint not null references imports (id),
  dry_run_of   bigint references imports (id),
  created_at   timestamptz not null default now(),
  updated_at   timestamptz not null default now()
);
create unique index import_refs_once on import_refs (program_id, source, kind, external_id) where dry_run_of is null;
create unique index import_refs_dry on import_refs (dry_run_of, kind, external_id) where dry_run_of is not null;

-- The times of the last requests to a source account (its key: a hash of the source, its base URL and the
-- credentials), so that every import of the account, on any process, counts against the source's one limit.
create table import_rate_limits (
  key         text primary key,
  requests    timestamptz[] not null default '{}',
  updated_at  timestamptz not null default now()
);

-- An imported sale says which import brought it (null: tracked here). Native sales are what
-- `already_tracked` compares imported commissions with.
alter table sales add column import_id bigint references imports (id);

-- The commands of imports travel through the outbox like every other effect of a transaction.
