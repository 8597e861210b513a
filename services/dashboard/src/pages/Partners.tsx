// Partners: the program's partners with what each brought in a period (clicks, conversions, revenue and
// commission, from GET /api/tracking/breakdown by partner), their group (with the picker and the lock) and
// balances, adding one, and per partner its referral links (create, copy the full URL, activate /
// deactivate, clicks and last click), its codes (PartnerCodes.tsx) and its own commission (PartnerGroup.tsx).
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { useSession } from '../session.tsx';
import { CopyButton } from '../copy.tsx';
import { ErrorBox, Loading, ReadOnlyNote, Show, Table } from '../widgets.tsx';
import { programPage } from '../program.tsx';
import { dateTime, money } from '../format.ts';
import { useAction, useLoad } from '../hooks.ts';
import type { Program } from '../program.tsx';
import { defaultLanding, referralUrl } from '../referral.ts';
import { InviteOnce, ReviewActions, StatusBadge } from './PartnerReview.tsx';
import type { Invite } from './PartnerReview.tsx';
import type { Answer } from '../api.ts';
import { PartnerCodes } from './PartnerCodes.tsx';
import { GroupCell, PartnerCommission } from './PartnerGroup.tsx';
import { useGroups } from '../groups.ts';

type Partner = Answer<'get', '/api/advertiser/affiliate-programs/{id}/partners'>['data'][number];
type Link = Answer<
  'get',
  '/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/links'
>['data'][number];
type PartnerFigures = Pick<
  Answer<'get', '/api/tracking/breakdown/{programId}'>['data'][number],
  'clicks' | 'conversions' | 'revenue' | 'commission'
>;
type Period = '7d' | '30d' | '90d' | 'all';
const PERIODS: { value: Period; label: string }[] = [
  { value: '7d', label: '7 days' },
  { value: '30d', label: '30 days' },
  { value: '90d', label: '90 days' },
  { value: 'all', label: 'All time' },
];
/** The breakdown answers at most 100 keys: the partners with the most clicks. */
const FIGURES_LIMIT = 100;

export const Partners = programPage('Partners', PartnersOf);

function PartnersOf({ program }: { program: Program }) {
  const { canWrite } = useSession();
  const partners = useLoad(
    async () =>
      (
        await api.GET('/api/advertiser/affiliate-programs/{id}/partners', {
          params: { path: { id: program.id } },
        })
      ).data,
    [program.id],
  );
  const [landing, setLanding] = useState(defaultLanding(program.allowed_origins, program.website_url));
  const [open, setOpen] = useState<number | null>(null);
  const [period, setPeriod] = useState<Period>('30d');
  const figures = useLoad(async () => {
    const b = await api.GET('/api/tracking/breakdown/{programId}', {
      params: {
        path: { programId: program.id },
        query: { dimension: 'partner', period, limit: FIGURES_LIMIT },
      },
    });
    return { byId: new Map(b.data.map((r) => [r.key, r])), complete: b.meta.keys <= b.data.length };
  }, [program.id, period]);
  const zero: PartnerFigures = { clicks: 0, conversions: 0, revenue: 0, commission: 0 };
  /** A partner's figures; null while loading, or when it is not among the FIGURES_LIMIT shown. */
  const figuresOf = (id: number): PartnerFigures | null =>
    figures.data?.byId.get(String(id)) ?? (figures.data?.complete ? zero : null);
  const cents = (units: number) => money(Math.round(units * 100), program.currency);
  const [invite, setInvite] = useState<Invite | null>(null);
  // For the group picker and the commission a partner earns by its group.
  const groups = useGroups(program.id);

  return (
    <>
      <p class="lede">
        {program.name} · clicks, conversions, revenue and commission for the period chosen below; balances in{' '}
        {program.currency}
      </p>
      {canWrite ? (
        <AddPartner programId={program.id} onAdded={partners.reload} onInvite={setInvite} />
      ) : (
        <ReadOnlyNote>Your role can view partners; owners and admins add them and their links.</ReadOnlyNote>
      )}
      {invite && <InviteOnce invite={invite} onDone={() => setInvite(null)} />}
      <label>
        Landing page for referral URLs{' '}
        <input
          type="url"
          value={landing}
          placeholder="https://your-site.example/"
          onInput={(e) => setLanding((e.target as HTMLInputElement).value)}
        />
      </label>
      {referralUrl(landing, 'x') === null && (
        <p class="note">
          Enter the page partners send visitors to (a page with the tracker). The program lists no allowed
          origin to suggest one.
        </p>
      )}
      <div class="toolbar" role="group" aria-label="Period of the partners' figures">
        {PERIODS.map((p) => (
          <button type="button" aria-pressed={period === p.value} onClick={() => setPeriod(p.value)}>
            {p.label}
          </button>
        ))}
      </div>
      <ErrorBox error={figures.error} />
      <ErrorBox error={groups.error} />
      <Show loaded={partners}>
        {(list) =>
          list.length === 0 ? (
            <p>No partners yet.</p>
          ) : (
            <Table
              caption={`Partners of ${program.name}`}
              hiddenCaption
              columns={[
                'Partner',
                'Status',
                'Group',
                'Clicks',
                'Conversions',
                'Revenue',
                'Commission',
                'Balance in this program',
                'Balance, all programs',
                'Joined',
                'Details',
              ]}
            >
              {list.map((p) => [
                <tr key={p.id}>
                  <td>
                    {p.name}
                    <br />
                    <span class="muted">{p.email}</span>
                  </td>
                  <td>
                    <StatusBadge status={p.status} />
                    {canWrite && (
                      <ReviewActions
                        programId={program.id}
                        partner={p}
                        onChanged={partners.reload}
                        onInvite={setInvite}
                      />
                    )}
                  </td>
                  <td>
                    <GroupCell
                      programId={program.id}
                      partner={p}
                      groups={groups.data}
                      canWrite={canWrite}
                      onChanged={() => {
                        partners.reload();
                        groups.reload();
                      }}
                    />
                  </td>
                  <PartnerCells figures={figuresOf(p.id)} money={cents} />
                  <td class={p.program_balance_cents < 0 ? 'negative' : undefined}>
                    {money(p.program_balance_cents, program.currency)}
                  </td>
                  <td class={p.balance_cents < 0 ? 'negative' : undefined}>
                    {money(p.balance_cents, program.currency)}
                  </td>
                  <td>{dateTime(p.joined_at)}</td>
                  <td>
                    <button
                      type="button"
                      aria-expanded={open === p.id}
                      aria-controls={`links-${p.id}`}
                      onClick={() => setOpen(open === p.id ? null : p.id)}
                    >
                      {open === p.id ? 'Hide links, codes and commission' : 'Links, codes and commission'}
                      <span class="sr-only"> of {p.name}</span>
                    </button>
                  </td>
                </tr>,
                open === p.id && (
                  <tr key={`links-${p.id}`} id={`links-${p.id}`}>
                    <td colSpan={11}>
                      <PartnerLinks programId={program.id} partner={p} landing={landing} />
                      <PartnerCodes programId={program.id} partner={p} />
                      <PartnerCommission
                        program={program}
                        partner={p}
                        groups={groups.data}
                        canWrite={canWrite}
                        onChanged={partners.reload}
                      />
                    </td>
                  </tr>
                ),
              ])}
            </Table>
          )
        }
      </Show>
    </>
  );
}

/** Clicks, conversions, revenue and commission of the period ("—": not loaded, or past the top 100). */
function PartnerCells(props: { figures: PartnerFigures | null; money(units: number): string }) {
  const f = props.figures;
  return (
    <>
      <td data-testid="partner-clicks">{f ? f.clicks : '—'}</td>
      <td>{f ? f.conversions : '—'}</td>
      <td>{f ? props.money(f.revenue) : '—'}</td>
      <td>{f ? props.money(f.commission) : '—'}</td>
    </>
  );
}

function AddPartner(props: { programId: number; onAdded: () => void; onInvite(i: Invite): void }) {
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [status, setStatus] = useState<'approved' | 'pending'>('approved');
  const submit = useAction();
  const [added, setAdded] = useState<string | null>(null);
  return (
    <form
      class="inline-form"
      aria-label="Add a partner"
      onSubmit={(e) => {
        e.preventDefault();
        setAdded(null);
        void submit
          .run(async () => {
            const r = await api.POST('/api/advertiser/affiliate-programs/{id}/partners', {
              params: { path: { id: props.programId } },
              body: { name, email, status },
            });
            if (r.data.invite_url)
              props.onInvite({ name: name.trim(), email: email.trim(), url: r.data.invite_url });
          })
          .then((ok) => {
            if (!ok) return;
            setAdded(`${name.trim()} was added.`);
            setName('');
            setEmail('');
            props.onAdded();
          });
      }}
    >
      <fieldset>
        <legend>Add a partner</legend>
        <label>
          Name <input required maxLength={200} value={name} onInput={(e) => setName(inputValue(e))} />
        </label>
        <label>
          Email <input type="email" required value={email} onInput={(e) => setEmail(inputValue(e))} />
        </label>
        <label>
          Status{' '}
          <select
            value={status}
            onChange={(e) => setStatus((e.target as HTMLSelectElement).value as 'approved' | 'pending')}
          >
            <option value="approved">approved</option>
            <option value="pending">pending</option>
          </select>
        </label>
        <button type="submit" class="primary" disabled={submit.busy}>
          Add partner
        </button>
      </fieldset>
      <ErrorBox error={submit.error} />
      {added && <p role="status">{added}</p>}
    </form>
  );
}

function PartnerLinks(props: { programId: number; partner: Partner; landing: string }) {
  const { canWrite } = useSession();
  const path = { path: { id: props.programId, partnerId: props.partner.id } };
  const links = useLoad(
    async () =>
      (await api.GET('/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/links', { params: path }))
        .data,
    [props.programId, props.partner.id],
  );
  const [code, setCode] = useState('');
  const create = useAction();
  const toggle = useAction();

  const setStatus = (l: Link, status: Link['status']) =>
    void toggle
      .run(async () => {
        await api.PUT('/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/links/{linkId}', {
          params: { path: { ...path.path, linkId: l.id } },
          body: { status },
        });
      })
      .then((ok) => ok && links.reload());

  return (
    <section class="links" aria-label={`Links of ${props.partner.name}`}>
      <h2>Links of {props.partner.name}</h2>
      {links.data === null && !links.error && <Loading />}
      <ErrorBox error={links.error} />
      <ErrorBox error={toggle.error} />
      {links.data && links.data.length === 0 && <p>No links yet.</p>}
      {links.data && links.data.length > 0 && (
        <ul class="link-list">
          {links.data.map((l) => {
            const full = referralUrl(props.landing, l.short_link);
            return (
              <li key={l.id} class={l.status === 'inactive' ? 'inactive' : undefined}>
                <div>
                  <code class="referral-url">{full ?? `?aff=${l.short_link}`}</code>{' '}
                  {full && <CopyButton text={full} label="Copy URL" />}
                </div>
                <div class="muted">
                  <span class={`badge ${l.status}`}>{l.status}</span> · {l.clicks}{' '}
                  {l.clicks === 1 ? 'click' : 'clicks'} · last click {dateTime(l.last_clicked)}
                  {canWrite && (
                    <>
                      {' '}
                      <button
                        type="button"
                        disabled={toggle.busy}
                        onClick={() => setStatus(l, l.status === 'active' ? 'inactive' : 'active')}
                      >
                        {l.status === 'active' ? 'Deactivate' : 'Activate'}
                        <span class="sr-only"> {l.short_link}</span>
                      </button>
                    </>
                  )}
                </div>
              </li>
            );
          })}
        </ul>
      )}
      {canWrite && (
        <form
          class="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            void create
              .run(async () => {
                await api.POST('/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/links', {
                  params: path,
                  body: code.trim() ? { short_link: code.trim() } : {},
                });
              })
              .then((ok) => {
                if (!ok) return;
                setCode('');
                links.reload();
              });
          }}
        >
          <label>
            Link code (optional; 8 random characters when empty){' '}
            <input
              value={code}
              maxLength={64}
              pattern="[A-Za-z0-9_\-]{1,64}"
              onInput={(e) => setCode(inputValue(e))}
            />
          </label>
          <button type="submit" class="primary" disabled={create.busy}>
            Create link
          </button>
          <ErrorBox error={create.error} />
        </form>
      )}
    </section>
  );
}

function inputValue(e: Event): string {
  return (e.target as HTMLInputElement).value;
}
