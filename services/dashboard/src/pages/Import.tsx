// Import (CONTRACT part five; docs/importing.md, docs/dashboard.md "Import"): bring a program from Rewardful,
// Dub or a CSV file. The source and its secret (never shown again, nor kept by this page), the campaigns read
// from the source to pick from, a dry run that counts and writes nothing, the run itself; then every import
// of the program with its live progress (read again each second while one is under way), its counts, a
// cancel, and its error rows as a CSV file.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { Answer } from '../api.ts';
import { useSession } from '../session.tsx';
import { ErrorBox, Loading, ReadOnlyNote, Table } from '../widgets.tsx';
import { programPage } from '../program.tsx';
import type { Program } from '../program.tsx';
import { dateTime } from '../format.ts';
import { useAction, useLoad } from '../hooks.ts';
import { toCsv } from '../csv.ts';
import './import.css';

type Import = Answer<'get', '/api/advertiser/affiliate-programs/{id}/imports/{importId}'>['data'];
type Campaign = Answer<'post', '/api/advertiser/affiliate-programs/{id}/imports/campaigns'>['data'][number];
type Source = 'rewardful' | 'dub' | 'csv';

const SOURCES: { value: Source; label: string; secret?: string; hint?: string }[] = [
  {
    value: 'rewardful',
    label: 'Rewardful',
    secret: 'API Secret',
    hint: "Rewardful's Company Settings page shows it. Links shared as ?via=<token> keep working: see Integration.",
  },
  {
    value: 'dub',
    label: 'Dub',
    secret: 'API key',
    hint: 'A Dub API key (dub_…) of the workspace of your program.',
  },
  {
    value: 'csv',
    label: 'CSV file',
    hint: 'One partner per row: email (required), name, link, coupon_code, stripe_promotion_code, group (a group slug).',
  },
];
const KINDS = ['groups', 'partners', 'links', 'codes', 'customers', 'commissions'] as const;
const LIVE = new Set(['queued', 'running']);

export const ImportPage = programPage('Import', ImportOf);

function ImportOf({ program }: { program: Program }) {
  const { canWrite } = useSession();
  const imports = useLoad(
    async () =>
      (
        await api.GET('/api/advertiser/affiliate-programs/{id}/imports', {
          params: { path: { id: program.id } },
        })
      ).data,
    [program.id],
  );
  // Live progress: read again each second while an import is queued or running.
  const running = imports.data?.some((i) => LIVE.has(i.status)) ?? false;
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(imports.reload, 1000);
    return () => clearInterval(timer);
  }, [running]);
  return (
    <>
      <p class="lede">
        Bring partners, their links and coupons, their customers and the commission history from another
        service. Running an import again creates nothing twice.
      </p>
      {canWrite ? (
        <NewImport program={program} onStarted={imports.reload} />
      ) : (
        <ReadOnlyNote>Only owners and admins start imports.</ReadOnlyNote>
      )}
      <section aria-labelledby="imports-list">
        <h2 id="imports-list">Imports</h2>
        <ErrorBox error={imports.error} />
        {imports.data === null ? (
          !imports.error && <Loading />
        ) : imports.data.length === 0 ? (
          <p>No imports yet.</p>
        ) : (
          imports.data.map((i) => (
            <ImportCard key={i.id} program={program} imp={i} onChanged={imports.reload} />
          ))
        )}
      </section>
    </>
  );
}

function NewImport(props: { program: Program; onStarted(): void }) {
  const [source, setSource] = useState<Source>('rewardful');
  const [secret, setSecret] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [inactive, setInactive] = useState(false);
  const [file, setFile] = useState<File | null>(null);
  const [campaigns, setCampaigns] = useState<Campaign[] | null>(null);
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const load = useAction();
  const start = useAction();
  const s = SOURCES.find((x) => x.value === source)!;
  const path = { path: { id: props.program.id } };
  const credentials = () => (source === 'rewardful' ? { api_secret: secret } : { api_key: secret });
  const options = (dryRun: boolean) => ({
    ...(baseUrl.trim() ? { api_base_url: baseUrl.trim() } : {}),
    ...(campaigns && picked.size < campaigns.length ? { campaign_ids: [...picked] } : {}),
    ...(inactive ? { include_inactive: true } : {}),
    dry_run: dryRun,
  });

  const loadCampaigns = () =>
    void load.run(async () => {
      const r = await api.POST('/api/advertiser/affiliate-programs/{id}/imports/campaigns', {
        params: path,
        body: { source: source as 'rewardful' | 'dub', credentials: credentials(), options: options(false) },
      });
      setCampaigns(r.data);
      setPicked(new Set(r.data.map((c) => c.id)));
    });

  const run = (dryRun: boolean) =>
    void start
      .run(async () => {
        if (source === 'csv') {
          if (!file) throw new Error('Choose the CSV file first');
          await api.raw.POST('/api/advertiser/affiliate-programs/{id}/imports', {
            params: { ...path, query: { source: 'csv', ...(dryRun ? { dry_run: 'true' } : {}) } },
            body: (await file.text()) as never,
            bodySerializer: (b: unknown) => b as string,
            headers: { 'content-type': 'text/csv' },
          });
        } else {
          await api.POST('/api/advertiser/affiliate-programs/{id}/imports', {
            params: path,
            body: { source, credentials: credentials(), options: options(dryRun) },
          });
        }
      })
      .then((ok) => ok && props.onStarted());

  return (
    <section aria-labelledby="import-new" class="import-new">
      <h2 id="import-new">New import</h2>
      <fieldset>
        <legend>Source</legend>
        {SOURCES.map((x) => (
          <label key={x.value}>
            <input
              type="radio"
              name="source"
              value={x.value}
              checked={source === x.value}
              onChange={() => {
                setSource(x.value);
                setCampaigns(null);
              }}
            />{' '}
            {x.label}
          </label>
        ))}
      </fieldset>
      {s.hint && <p class="subtle">{s.hint}</p>}
      {source === 'csv' ? (
        <label>
          CSV file{' '}
          <input
            type="file"
            accept=".csv,text/csv"
            onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)}
          />
        </label>
      ) : (
        <>
          <label>
            {s.secret}{' '}
            <input
              type="password"
              autocomplete="off"
              value={secret}
              onInput={(e) => setSecret((e.target as HTMLInputElement).value)}
            />
          </label>
          <details>
            <summary>Advanced</summary>
            <label>
              API base URL <span class="subtle">(a proxy; empty: {s.label}&apos;s own)</span>{' '}
              <input
                type="url"
                value={baseUrl}
                onInput={(e) => setBaseUrl((e.target as HTMLInputElement).value)}
              />
            </label>
          </details>
          <label>
            <input
              type="checkbox"
              checked={inactive}
              onChange={(e) => setInactive((e.target as HTMLInputElement).checked)}
            />{' '}
            Also partners who are not active there (they join as pending)
          </label>
          <p>
            <button type="button" disabled={load.busy || secret.trim() === ''} onClick={loadCampaigns}>
              Load campaigns
            </button>
          </p>
          <ErrorBox error={load.error} />
          {campaigns && (
            <fieldset class="campaigns">
              <legend>
                Campaigns to import ({picked.size} of {campaigns.length})
              </legend>
              {campaigns.map((c) => (
                <label key={c.id}>
                  <input
                    type="checkbox"
                    checked={picked.has(c.id)}
                    onChange={(e) => {
                      const next = new Set(picked);
                      if ((e.target as HTMLInputElement).checked) next.add(c.id);
                      else next.delete(c.id);
                      setPicked(next);
                    }}
                  />{' '}
                  {c.name}
                </label>
              ))}
            </fieldset>
          )}
        </>
      )}
      <p class="actions">
        <button type="button" disabled={start.busy} onClick={() => run(true)}>
          Dry run
        </button>{' '}
        <button type="button" class="primary" disabled={start.busy} onClick={() => run(false)}>
          Import
        </button>
      </p>
      <p class="subtle">A dry run reads everything and counts what an import would do; it writes nothing.</p>
      <ErrorBox error={start.error} />
    </section>
  );
}

function ImportCard(props: { program: Program; imp: Import; onChanged(): void }) {
  const { canWrite } = useSession();
  const { imp } = props;
  const cancel = useAction();
  const download = useAction();
  const path = { path: { id: props.program.id, importId: imp.id } };
  const source = SOURCES.find((s) => s.value === imp.source)?.label ?? imp.source;
  const failedOrSkipped = KINDS.reduce((n, k) => n + imp.counts[k].failed + imp.counts[k].skipped, 0);

  const errorsCsv = () =>
    void download.run(async () => {
      const r = await api.GET('/api/advertiser/affiliate-programs/{id}/imports/{importId}/errors', {
        params: path,
      });
      const csv = toCsv(
        ['kind', 'external_id', 'code', 'message'],
        r.data.map((e) => [e.kind, e.external_id, e.code, e.message]),
      );
      const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv;charset=utf-8' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = `import-${imp.id}-errors.csv`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    });

  return (
    <article class="import-card" data-import={imp.id} aria-label={`Import ${imp.id}`}>
      <h3>
        {imp.dry_run ? 'Dry run' : 'Import'} #{imp.id} from {source}{' '}
        <span class={`badge ${imp.status}`} data-testid="import-status">
          {imp.status}
        </span>
      </h3>
      <p class="subtle">
        {LIVE.has(imp.status) ? (
          <span aria-live="polite" data-testid="import-step">
            Reading {imp.step}…
          </span>
        ) : (
          `Finished ${imp.finished_at ? dateTime(imp.finished_at) : ''}`
        )}{' '}
        · started {dateTime(imp.created_at)}
      </p>
      {imp.error && (
        <p class="error" role="alert">
          {imp.error}
        </p>
      )}
      <Table
        caption={`Counts of import ${imp.id}`}
        hiddenCaption
        columns={['', 'Created', 'Updated', 'Skipped', 'Failed']}
      >
        {KINDS.map((k) => (
          <tr key={k} data-kind={k}>
            <th scope="row">{k}</th>
            <td>{imp.counts[k].created}</td>
            <td>{imp.counts[k].updated}</td>
            <td>{imp.counts[k].skipped}</td>
            <td>{imp.counts[k].failed}</td>
          </tr>
        ))}
      </Table>
      <p class="actions">
        {failedOrSkipped > 0 && (
          <button type="button" disabled={download.busy} onClick={errorsCsv}>
            Errors (CSV)
          </button>
        )}{' '}
        {canWrite && LIVE.has(imp.status) && (
          <button
            type="button"
            disabled={cancel.busy}
            onClick={() =>
              void cancel
                .run(() =>
                  api.POST('/api/advertiser/affiliate-programs/{id}/imports/{importId}/cancel', {
                    params: path,
                  }),
                )
                .then((ok) => ok && props.onChanged())
            }
          >
            Cancel
          </button>
        )}
      </p>
      <ErrorBox error={cancel.error ?? download.error} />
    </article>
  );
}
