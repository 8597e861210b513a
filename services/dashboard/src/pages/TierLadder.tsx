// The tier ladder of a program (CONTRACT part four "Tiers"): the rules that move a partner from one group to
// another once its sales, customers or commission reach a threshold, read as a ladder ("Default → Gold at
// $1,000.00 of sales in total") and edited as a whole list (GET/PUT …/tier-rules: the PUT replaces them all, in
// order). Money thresholds are typed in the currency's main unit and sent as cents; what the API refuses is
// shown as it says it (`tier_rules[0].to_group_id must differ from from_group_id`), with that rule marked.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { Answer, RequestBody } from '../api.ts';
import { ErrorBox, Show, SubmitCancel } from '../widgets.tsx';
import type { Program } from '../program.tsx';
import { messageOf, useAction, useLoad } from '../hooks.ts';
import { TIER_METRICS, TIER_WINDOWS, isMoneyMetric, metricAmount, windowText } from '../rewards.ts';
import type { TierMetric, TierWindow } from '../rewards.ts';
import type { Group } from '../groups.ts';

type TierRule = Answer<'get', '/api/advertiser/affiliate-programs/{id}/tier-rules'>['data'][number];
type LadderBody = RequestBody<'put', '/api/advertiser/affiliate-programs/{id}/tier-rules'>;

interface RuleInput {
  from: string;
  to: string;
  metric: TierMetric;
  window: TierWindow;
  /** As typed: currency units for money metrics, a count for customers. */
  threshold: string;
  carry: boolean;
}

function ruleInput(r: TierRule): RuleInput {
  return {
    from: String(r.from_group_id),
    to: String(r.to_group_id),
    metric: r.metric,
    window: r.window,
    threshold: String(isMoneyMetric(r.metric) ? r.threshold / 100 : r.threshold),
    carry: r.carry_existing_customers,
  };
}

/** The request body; a threshold that is not a number is refused here, its range is the API's to judge. */
function ladderBody(rules: RuleInput[]): LadderBody {
  return rules.map((r, i) => {
    const typed = r.threshold.trim().replace(',', '.');
    const n = Number(typed);
    if (typed === '' || !Number.isFinite(n)) throw new Error(`Rule ${i + 1}: enter a threshold`);
    return {
      from_group_id: Number(r.from),
      to_group_id: Number(r.to),
      metric: r.metric,
      window: r.window,
      threshold: isMoneyMetric(r.metric) ? Math.round(n * 100) : n,
      carry_existing_customers: r.carry,
    };
  });
}

/** The rule an API message names (`tier_rules[2]…`), or null. */
const ruleOfError = (e: string | null) => {
  const m = e ? /tier_rules\[(\d+)\]/.exec(e) : null;
  return m ? Number(m[1]) : null;
};

export function TierLadder(props: { program: Program; groups: Group[]; canWrite: boolean; tick: number }) {
  const { program, groups } = props;
  const rules = useLoad(
    async () =>
      (
        await api.GET('/api/advertiser/affiliate-programs/{id}/tier-rules', {
          params: { path: { id: program.id } },
        })
      ).data,
    [program.id, props.tick],
  );
  const [editing, setEditing] = useState(false);
  const nameOf = (id: number) => groups.find((g) => g.id === id)?.name ?? `group ${id}`;

  return (
    <section aria-labelledby="ladder-heading">
      <h2 id="ladder-heading">Tier ladder</h2>
      <p class="lede">
        After each sale or refund, a partner who is not locked moves up the first rule from their group whose
        figure reached its threshold. The sale that crosses it keeps the old rate; refunds never move anyone
        back.
      </p>
      <Show loaded={rules}>
        {(list) =>
          editing ? (
            <LadderForm
              program={program}
              groups={groups}
              rules={list}
              onCancel={() => setEditing(false)}
              onSaved={() => {
                setEditing(false);
                rules.reload();
              }}
            />
          ) : (
            <>
              {list.length === 0 ? (
                <p>No tier rules: partners stay in their group until you move them.</p>
              ) : (
                <ol class="ladder" aria-label="Tier rules, in the order they are tried">
                  {list.map((r) => (
                    <li key={r.id}>
                      <strong>{nameOf(r.from_group_id)}</strong> <span aria-hidden="true">→</span>
                      <span class="sr-only"> to </span> <strong>{nameOf(r.to_group_id)}</strong> at{' '}
                      {metricAmount(r.metric, r.threshold, program.currency)} {windowText(r.window)}
                      <span class="muted">
                        {' '}
                        ·{' '}
                        {r.carry_existing_customers
                          ? 'existing customers earn the new rate'
                          : 'existing customers keep the old rate'}
                      </span>
                    </li>
                  ))}
                </ol>
              )}
              {props.canWrite && (
                <button type="button" onClick={() => setEditing(true)} disabled={groups.length < 2}>
                  Edit the ladder
                </button>
              )}
              {props.canWrite && groups.length < 2 && (
                <p class="note">A ladder needs two groups: create another group first.</p>
              )}
            </>
          )
        }
      </Show>
    </section>
  );
}

function LadderForm(props: {
  program: Program;
  groups: Group[];
  rules: TierRule[];
  onCancel(): void;
  onSaved(): void;
}) {
  const { groups } = props;
  const [rules, setRules] = useState<RuleInput[]>(props.rules.map(ruleInput));
  const save = useAction();
  const first = useRef<HTMLSelectElement>(null);
  useLayoutEffect(() => first.current?.focus(), []);
  const bad = ruleOfError(save.error);
  const formRef = useRef<HTMLFormElement>(null);
  // The rule the API named takes the focus (the submit button, disabled while saving, lost it).
  useEffect(() => {
    if (bad !== null)
      formRef.current?.querySelectorAll('fieldset.tier-rule')[bad]?.querySelector('select')?.focus();
  }, [save.error]);
  const set = (i: number, patch: Partial<RuleInput>) =>
    setRules(rules.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const move = (i: number, by: number) => {
    const next = [...rules];
    [next[i], next[i + by]] = [next[i + by]!, next[i]!];
    setRules(next);
  };
  const add = () => {
    // The next step up: from the last rule's target, or from the default group.
    const from = rules.at(-1)?.to ?? String(groups.find((g) => g.is_default)?.id ?? groups[0]!.id);
    const to = String(groups.find((g) => String(g.id) !== from)?.id ?? from);
    setRules([...rules, { from, to, metric: 'sales_cents', window: 'lifetime', threshold: '', carry: true }]);
  };
  const groupSelect = (i: number, key: 'from' | 'to', label: string) => (
    <label>
      {label}
      <select
        ref={i === 0 && key === 'from' ? first : undefined}
        value={rules[i]![key]}
        onChange={(e) => set(i, { [key]: (e.target as HTMLSelectElement).value })}
      >
        {groups.map((g) => (
          <option value={String(g.id)}>{g.name}</option>
        ))}
      </select>
    </label>
  );

  return (
    <form
      ref={formRef}
      class="panel ladder-form"
      aria-label="Edit the tier ladder"
      onKeyDown={(e) => {
        if (e.key === 'Escape') props.onCancel();
      }}
      onSubmit={(e) => {
        e.preventDefault();
        let body: LadderBody;
        try {
          body = ladderBody(rules);
        } catch (err) {
          save.setError(messageOf(err));
          return;
        }
        void save
          .run(async () => {
            await api.PUT('/api/advertiser/affiliate-programs/{id}/tier-rules', {
              params: { path: { id: props.program.id } },
              body,
            });
          })
          .then((ok) => ok && props.onSaved());
      }}
    >
      {rules.length === 0 && <p>No rules: saving removes the ladder.</p>}
      {rules.map((r, i) => (
        <fieldset
          key={i}
          class={bad === i ? 'tier-rule invalid' : 'tier-rule'}
          aria-invalid={bad === i ? 'true' : undefined}
        >
          <legend>Rule {i + 1}</legend>
          {groupSelect(i, 'from', 'From group')}
          {groupSelect(i, 'to', 'To group')}
          <label>
            Metric
            <select
              value={r.metric}
              onChange={(e) => set(i, { metric: (e.target as HTMLSelectElement).value as TierMetric })}
            >
              {TIER_METRICS.map((m) => (
                <option value={m.value}>{m.label}</option>
              ))}
            </select>
          </label>
          <label>
            Window
            <select
              value={r.window}
              onChange={(e) => set(i, { window: (e.target as HTMLSelectElement).value as TierWindow })}
            >
              {TIER_WINDOWS.map((w) => (
                <option value={w.value}>{w.label}</option>
              ))}
            </select>
          </label>
          <label>
            Threshold {isMoneyMetric(r.metric) ? `(${props.program.currency})` : '(customers)'}
            <input
              inputMode={isMoneyMetric(r.metric) ? 'decimal' : 'numeric'}
              required
              value={r.threshold}
              onInput={(e) => set(i, { threshold: (e.target as HTMLInputElement).value })}
            />
          </label>
          <label class="check">
            <input
              type="checkbox"
              checked={r.carry}
              onChange={(e) => set(i, { carry: (e.target as HTMLInputElement).checked })}
            />
            Existing customers earn the new rate
          </label>
          <span class="row-actions">
            <button type="button" disabled={i === 0} onClick={() => move(i, -1)}>
              Move up<span class="sr-only"> rule {i + 1}</span>
            </button>
            <button type="button" disabled={i === rules.length - 1} onClick={() => move(i, 1)}>
              Move down<span class="sr-only"> rule {i + 1}</span>
            </button>
            <button type="button" onClick={() => setRules(rules.filter((_, j) => j !== i))}>
              Remove rule {i + 1}
            </button>
          </span>
        </fieldset>
      ))}
      <p>
        <button type="button" onClick={add}>
          Add a rule
        </button>
      </p>
      <ErrorBox error={save.error} />
      <SubmitCancel busy={save.busy} label="Save the ladder" onCancel={props.onCancel} />
    </form>
  );
}
