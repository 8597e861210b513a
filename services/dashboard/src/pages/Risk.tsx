// Risk (CONTRACT part three "Traffic quality and fraud"): the commissions held for review, by reason and
// partner, approved or rejected here with the review queue's own actions; the clicks left out of every
// counter (bots and prefetches) by quality, totals and a daily chart; the program's risk rules as switches.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { Answer } from '../api.ts';
import { useSession } from '../session.tsx';
import { ErrorBox, Loading, ReadOnlyNote, Table } from '../widgets.tsx';
import { programPage } from '../program.tsx';
import type { Program } from '../program.tsx';
import { dateTime, money } from '../format.ts';
import { useAction, useLoad } from '../hooks.ts';
import { DailyChart } from '../chart.tsx';
import { ReviewActions, isHeld, reviewReasonText } from './CommissionReview.tsx';
import '../parts.css';
import './risk.css';

type RiskData = Answer<'get', '/api/advertiser/affiliate-programs/{id}/risk'>['data'];
type Commission = Answer<'get', '/api/advertiser/affiliate-programs/{id}/commissions'>['data'][number];
type RiskRules = Program['risk_rules'];

const RULES: { key: keyof RiskRules; label: string; note: string }[] = [
  {
    key: 'disposable_email',
    label: 'Disposable email',
    note: "Hold a sale whose lead's email is at a throwaway-mailbox domain",
  },
  {
    key: 'shared_payout_method',
    label: 'Shared payout method',
    note: 'Hold a sale of a partner paid the same way as another partner account of the workspace',
  },
  {
    key: 'paid_search',
    label: 'Paid search',
    note: 'Hold a sale whose click came from a search ad (gclid, gbraid, wbraid, msclkid)',
  },
];
const QUALITY_TEXT: Record<string, string> = {
  bot: 'Bots and link previews',
  prefetch: 'Browser prefetches',
};

export const Risk = programPage('Risk', RiskOf);

function RiskOf({ program }: { program: Program }) {
  const risk = useLoad(
    async () =>
      (
        await api.GET('/api/advertiser/affiliate-programs/{id}/risk', {
          params: { path: { id: program.id } },
        })
      ).data,
    [program.id],
  );
  const held = useLoad(
    async () =>
      (
        await api.GET('/api/advertiser/affiliate-programs/{id}/commissions', {
          params: { path: { id: program.id }, query: { status: 'review', limit: 1000 } },
        })
      ).data,
    [program.id],
  );
  return (
    <>
      <ErrorBox error={risk.error} />
      <HeldSection
        program={program}
        risk={risk.data}
        held={held.data}
        error={held.error}
        reload={risk.reload}
      />
      {risk.data === null ? !risk.error && <Loading /> : <FilteredSection risk={risk.data} />}
      <RulesSection program={program} />
    </>
  );
}

function HeldSection(props: {
  program: Program;
  risk: RiskData | null;
  held: Commission[] | null;
  error: string | null;
  reload(): void;
}) {
  const { canWrite } = useSession();
  // Decided here (approved, rejected) as the API answered, until the lists are read again; listed under the
  // reason they were held for.
  const [changed, setChanged] = useState<Map<number, Commission>>(new Map());
  if (props.error) return <ErrorBox error={props.error} />;
  if (props.risk === null || props.held === null) return <Loading />;
  const names = new Map(props.risk.held.map((h) => [h.partner_id, h.partner_name]));
  const reasons = [...new Set(props.risk.held.map((h) => h.reason))];
  const held = props.held;
  return (
    <section aria-labelledby="risk-held">
      <h2 id="risk-held">Held for review</h2>
      {reasons.length === 0 ? (
        <p>No commissions wait for review.</p>
      ) : (
        reasons.map((reason) => (
          <div class="risk-reason" data-testid={`held-${reason}`}>
            <h3>{reviewReasonText(reason)}</h3>
            <ul class="risk-partners">
              {props
                .risk!.held.filter((h) => h.reason === reason)
                .map((h) => (
                  <li data-testid={`held-${reason}-${h.partner_id}`}>
                    <strong>{h.partner_name}</strong>: {h.commissions}{' '}
                    {h.commissions === 1 ? 'commission' : 'commissions'},{' '}
                    {money(h.amount_cents, props.program.currency)}
                  </li>
                ))}
            </ul>
            <Table
              caption={`Held commissions: ${reviewReasonText(reason)}`}
              hiddenCaption
              columns={['Created', 'Partner', 'Sale', 'Amount', 'Status', canWrite && 'Action']}
            >
              {held
                .filter((h) => h.review_reason === reason)
                .map((h) => changed.get(h.id) ?? h)
                .map((c) => (
                  <tr key={c.id} data-commission={c.id}>
                    <td>{dateTime(c.created_at)}</td>
                    <td>{names.get(c.partner_id) ?? `Partner #${c.partner_id}`}</td>
                    <td>#{c.sale_id}</td>
                    <td>{money(c.amount_cents, c.currency)}</td>
                    <td>
                      <span class={`badge ${c.status}`}>{isHeld(c) ? 'held' : c.status}</span>
                    </td>
                    {canWrite && (
                      <td>
                        {isHeld(c) ? (
                          <ReviewActions
                            commissionId={c.id}
                            label={`commission ${c.id} of ${names.get(c.partner_id) ?? c.partner_id}`}
                            onChanged={(d) => setChanged((m) => new Map(m).set(c.id, { ...c, ...d }))}
                          />
                        ) : (
                          'Decided'
                        )}
                      </td>
                    )}
                  </tr>
                ))}
            </Table>
          </div>
        ))
      )}
      {changed.size > 0 && (
        <button type="button" onClick={props.reload}>
          Refresh the totals
        </button>
      )}
    </section>
  );
}

function FilteredSection({ risk }: { risk: RiskData }) {
  // The last 30 UTC days, each with both qualities (zero when none).
  const days: { date: string }[] = [];
  const today = Math.floor(Date.now() / 86_400_000);
  for (let d = today - 29; d <= today; d++)
    days.push({ date: new Date(d * 86_400_000).toISOString().slice(0, 10) });
  const of = (quality: string) =>
    days.map(
      (d) => risk.filtered_by_day.find((r) => r.date === d.date && r.quality === quality)?.clicks ?? 0,
    );
  return (
    <section aria-labelledby="risk-filtered">
      <h2 id="risk-filtered">Filtered clicks</h2>
      <p class="note">
        Answered like any click but counted nowhere: not in the click counters, the charts or the breakdowns.
      </p>
      <dl class="risk-totals">
        {risk.filtered_clicks.map((f) => (
          <div data-testid={`filtered-${f.quality}`}>
            <dt>{QUALITY_TEXT[f.quality] ?? f.quality}</dt>
            <dd>{f.clicks.toLocaleString('en-US')}</dd>
          </div>
        ))}
      </dl>
      <DailyChart
        title="Filtered clicks by day"
        days={days}
        series={[
          { label: 'Bots', color: '#b45309', values: of('bot') },
          { label: 'Prefetches', color: '#6d28d9', values: of('prefetch') },
        ]}
        format={(v) => String(Math.round(v))}
      />
    </section>
  );
}

function RulesSection({ program }: { program: Program }) {
  const { canWrite } = useSession();
  const [rules, setRules] = useState<RiskRules>(program.risk_rules);
  const action = useAction();
  const toggle = (key: keyof RiskRules, on: boolean) =>
    void action.run(async () => {
      const r = await api.PUT('/api/advertiser/affiliate-programs/{id}', {
        params: { path: { id: program.id } },
        body: { risk_rules: { [key]: on } },
      });
      setRules(r.data.risk_rules);
    });
  return (
    <section aria-labelledby="risk-rules">
      <h2 id="risk-rules">Rules</h2>
      <p class="note">A sale through a bot&apos;s or a prefetch&apos;s click is always held.</p>
      {!canWrite && <ReadOnlyNote>Only owners and admins change the rules.</ReadOnlyNote>}
      <ul class="risk-rules">
        {RULES.map((r) => (
          <li>
            <label>
              <input
                type="checkbox"
                role="switch"
                checked={rules[r.key]}
                disabled={!canWrite || action.busy}
                onChange={(e) => toggle(r.key, (e.target as HTMLInputElement).checked)}
              />{' '}
              {r.label}
            </label>
            <span class="subtle"> {r.note}</span>
          </li>
        ))}
      </ul>
      <ErrorBox error={action.error} />
    </section>
  );
}
