// Bonuses on the Groups page (CONTRACT part four "Bonuses"): each running or planned bonus with its goal, what it
// pays, for which groups and when, how many commissions it made, and the partners' progress towards it
// (GET …/bonuses/:bonusId/progress); create one, delete one (it stops counting; what it paid stays).
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { Answer, RequestBody } from '../api.ts';
import { ConfirmButton, ErrorBox, Show, SubmitCancel } from '../widgets.tsx';
import type { Program } from '../program.tsx';
import type { Group } from '../groups.ts';
import { dateTime, money } from '../format.ts';
import { messageOf, useAction, useLoad } from '../hooks.ts';
import { BONUS_METRICS, bonusPeriodText, isMoneyMetric, metricAmount, metricValue } from '../rewards.ts';
import type { BonusMetric } from '../rewards.ts';
import { ProgressBar } from '../progress.tsx';

type Bonus = Answer<'get', '/api/advertiser/affiliate-programs/{id}/bonuses'>['data'][number];
type BonusBody = RequestBody<'post', '/api/advertiser/affiliate-programs/{id}/bonuses'>;

/** How many partners a bonus's card shows (the API answers the 100 closest). */
const SHOWN = 10;

export function Bonuses(props: { program: Program; groups: Group[]; canWrite: boolean }) {
  const { program } = props;
  const bonuses = useLoad(
    async () =>
      (
        await api.GET('/api/advertiser/affiliate-programs/{id}/bonuses', {
          params: { path: { id: program.id } },
        })
      ).data,
    [program.id],
  );
  const [creating, setCreating] = useState(false);
  return (
    <section aria-labelledby="bonuses-heading">
      <h2 id="bonuses-heading">Bonuses</h2>
      <p class="lede">
        A partner whose figure reaches a bonus's goal while it runs earns one commission of its amount (one a
        month for a monthly bonus), held, reviewed and paid like any other. Refunds later do not take it back.
      </p>
      {props.canWrite && !creating && (
        <p>
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            New bonus
          </button>
        </p>
      )}
      {creating && (
        <BonusForm
          program={program}
          groups={props.groups}
          onCancel={() => setCreating(false)}
          onCreated={() => {
            setCreating(false);
            bonuses.reload();
          }}
        />
      )}
      <Show loaded={bonuses}>
        {(list) =>
          list.length === 0 ? (
            <p>No bonuses.</p>
          ) : (
            <ul class="cards bonuses">
              {list.map((b) => (
                <li class="card" key={b.id}>
                  <BonusCard
                    program={program}
                    groups={props.groups}
                    bonus={b}
                    canWrite={props.canWrite}
                    onDeleted={bonuses.reload}
                  />
                </li>
              ))}
            </ul>
          )
        }
      </Show>
    </section>
  );
}

function BonusCard(props: {
  program: Program;
  groups: Group[];
  bonus: Bonus;
  canWrite: boolean;
  onDeleted(): void;
}) {
  const { program, bonus: b } = props;
  const path = { id: program.id, bonusId: b.id };
  const progress = useLoad(
    async () =>
      (
        await api.GET('/api/advertiser/affiliate-programs/{id}/bonuses/{bonusId}/progress', {
          params: { path },
        })
      ).data,
    [program.id, b.id],
  );
  const now = Date.now();
  const state =
    Date.parse(b.ends_at) <= now ? 'ended' : Date.parse(b.starts_at) > now ? 'not started' : 'running';
  const groupNames =
    b.group_ids === null
      ? 'every group'
      : b.group_ids.map((id) => props.groups.find((g) => g.id === id)?.name ?? `group ${id}`).join(', ');
  return (
    <article aria-labelledby={`bonus-${b.id}`} data-bonus={b.id}>
      <h3 id={`bonus-${b.id}`}>
        {b.name} <span class={`badge ${state === 'running' ? 'live' : ''}`}>{state}</span>
      </h3>
      <dl class="facts">
        <dt>Goal</dt>
        <dd>
          {metricAmount(b.metric, b.threshold, program.currency)}, {bonusPeriodText(b.period)}
        </dd>
        <dt>Pays</dt>
        <dd>{money(b.amount_cents, program.currency)}</dd>
        <dt>Groups</dt>
        <dd>{groupNames}</dd>
        <dt>Runs</dt>
        <dd>
          {dateTime(b.starts_at)} to {dateTime(b.ends_at)}
        </dd>
        <dt>Commissions made</dt>
        <dd data-testid="bonus-awarded">{b.awarded}</dd>
      </dl>
      <h4>{b.period === 'calendar_month' ? 'Progress this month' : 'Progress'}</h4>
      <Show loaded={progress}>
        {(rows) =>
          rows.length === 0 ? (
            <p class="muted">No partner has progress yet.</p>
          ) : (
            <>
              <ul class="bonus-progress">
                {rows.slice(0, SHOWN).map((r) => (
                  <li key={r.partner_id}>
                    <strong>{r.partner_name}</strong> <span class="muted">({r.group_name})</span>{' '}
                    {r.awarded && <span class="badge live">earned</span>}
                    <ProgressBar
                      label={`${r.partner_name} towards ${b.name}`}
                      value={r.value}
                      max={b.threshold}
                      done={r.awarded}
                      text={`${metricValue(b.metric, r.value, program.currency)} of ${metricValue(b.metric, b.threshold, program.currency)}`}
                    />
                  </li>
                ))}
              </ul>
              {rows.length > SHOWN && (
                <p class="muted">
                  The {SHOWN} closest of {rows.length >= 100 ? '100 or more' : rows.length} partners with
                  progress.
                </p>
              )}
            </>
          )
        }
      </Show>
      {props.canWrite && (
        <p class="actions">
          <ConfirmButton
            label={`Delete ${b.name}`}
            danger
            question={`Delete ${b.name}? It stops counting; the commissions it made stay.`}
            confirmLabel="Yes, delete"
            onConfirm={async () => {
              await api.DELETE('/api/advertiser/affiliate-programs/{id}/bonuses/{bonusId}', {
                params: { path },
              });
              props.onDeleted();
            }}
          />
        </p>
      )}
    </article>
  );
}

/** A datetime-local value (the viewer's time) as an instant, or null when empty. */
function instantOf(local: string, field: string): string | null {
  if (local.trim() === '') return null;
  const t = new Date(local);
  if (Number.isNaN(t.getTime())) throw new Error(`${field}: enter a date and time`);
  return t.toISOString();
}

function BonusForm(props: { program: Program; groups: Group[]; onCancel(): void; onCreated(): void }) {
  const { program } = props;
  const [name, setName] = useState('');
  const [every, setEvery] = useState(true);
  const [groupIds, setGroupIds] = useState<number[]>([]);
  const [metric, setMetric] = useState<BonusMetric>('sales_cents');
  const [threshold, setThreshold] = useState('');
  const [amount, setAmount] = useState('');
  const [period, setPeriod] = useState<'once' | 'calendar_month'>('once');
  const [starts, setStarts] = useState('');
  const [ends, setEnds] = useState('');
  const save = useAction();
  const nameRef = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => nameRef.current?.focus(), []);

  const body = (): BonusBody => {
    const t = Number(threshold.trim().replace(',', '.'));
    if (threshold.trim() === '' || !Number.isFinite(t)) throw new Error('Goal: enter a number');
    const a = Number(amount.trim().replace(',', '.'));
    if (amount.trim() === '' || !Number.isFinite(a)) throw new Error('Bonus amount: enter an amount');
    const endsAt = instantOf(ends, 'Ends');
    if (endsAt === null) throw new Error('Ends: enter a date and time');
    return {
      name,
      group_ids: every ? null : groupIds,
      metric,
      threshold: isMoneyMetric(metric) ? Math.round(t * 100) : t,
      amount_cents: Math.round(a * 100),
      period,
      starts_at: instantOf(starts, 'Starts'),
      ends_at: endsAt,
    };
  };

  return (
    <form
      class="panel"
      aria-label="New bonus"
      onKeyDown={(e) => {
        if (e.key === 'Escape') props.onCancel();
      }}
      onSubmit={(e) => {
        e.preventDefault();
        let b: BonusBody;
        try {
          b = body();
        } catch (err) {
          save.setError(messageOf(err));
          return;
        }
        void save
          .run(async () => {
            await api.POST('/api/advertiser/affiliate-programs/{id}/bonuses', {
              params: { path: { id: program.id } },
              body: b,
            });
          })
          .then((ok) => ok && props.onCreated());
      }}
    >
      <h3>New bonus</h3>
      <div class="grid">
        <label>
          Bonus name
          <input
            ref={nameRef}
            required
            maxLength={100}
            value={name}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Counts
          <select
            value={metric}
            onChange={(e) => setMetric((e.target as HTMLSelectElement).value as BonusMetric)}
          >
            {BONUS_METRICS.map((m) => (
              <option value={m.value}>{m.label}</option>
            ))}
          </select>
        </label>
        <label>
          Goal {isMoneyMetric(metric) ? `(${program.currency})` : `(${metric})`}
          <input
            inputMode={isMoneyMetric(metric) ? 'decimal' : 'numeric'}
            required
            value={threshold}
            onInput={(e) => setThreshold((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Bonus amount ({program.currency})
          <input
            inputMode="decimal"
            required
            value={amount}
            onInput={(e) => setAmount((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Paid
          <select
            value={period}
            onChange={(e) => setPeriod((e.target as HTMLSelectElement).value as 'once' | 'calendar_month')}
          >
            <option value="once">Once</option>
            <option value="calendar_month">Each calendar month (UTC)</option>
          </select>
        </label>
        <label>
          Starts <span class="subtle">(empty: now)</span>
          <input
            type="datetime-local"
            value={starts}
            onInput={(e) => setStarts((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Ends
          <input
            type="datetime-local"
            required
            value={ends}
            onInput={(e) => setEnds((e.target as HTMLInputElement).value)}
          />
        </label>
      </div>
      <fieldset class="inline">
        <legend>Groups</legend>
        <label class="check">
          <input
            type="checkbox"
            checked={every}
            onChange={(e) => setEvery((e.target as HTMLInputElement).checked)}
          />
          Every group
        </label>
        {!every &&
          props.groups.map((g) => (
            <label class="check">
              <input
                type="checkbox"
                checked={groupIds.includes(g.id)}
                onChange={(e) =>
                  setGroupIds(
                    (e.target as HTMLInputElement).checked
                      ? [...groupIds, g.id]
                      : groupIds.filter((id) => id !== g.id),
                  )
                }
              />
              {g.name}
            </label>
          ))}
      </fieldset>
      <p class="note">Sales since it starts count, including those made before you create it.</p>
      <ErrorBox error={save.error} />
      <SubmitCancel busy={save.busy} label="Create bonus" onCancel={props.onCancel} />
    </form>
  );
}
