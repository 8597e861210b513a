// The one editor of a commission policy (shared/domain/policy-schema.ts): the rate, recurring sales with the
// stepped rate of a customer's first payments, and per-product rules. The program form, the group form and a
// partner's own commission all use it: `policyInput` turns a policy into what the fields hold, `policyBody`
// back into the request's policy (a number that is not one is refused here with a message naming the field;
// ranges are the API's to check, and its 400 is what the form shows).
import type { CommissionPolicy, Rate } from '../api.ts';
import type { ProgramFields } from '../program.tsx';
import './rewards.css';

/** A policy as a request sends it (the program's, a group's, a partner's: one schema). */
export type PolicyRequest = NonNullable<ProgramFields['commission']>;
type RateBody = Pick<PolicyRequest, 'type' | 'percent' | 'amount_cents'>;

export interface RateInput {
  type: 'percentage' | 'flat';
  /** Percent, or the flat amount in the currency's main unit, as typed. */
  value: string;
}
export interface RuleInput extends RateInput {
  product_id: string;
}
export interface PolicyInput {
  rate: RateInput;
  mode: 'one_time' | 'recurring';
  /** Whole months as typed; empty: lifetime. */
  months: string;
  /** The stepped rate of a customer's first payments, or null. */
  first: (RateInput & { count: string }) | null;
  rules: RuleInput[];
}

function rateInput(r: Rate): RateInput {
  return r.type === 'percentage'
    ? { type: 'percentage', value: String(r.percent ?? 0) }
    : { type: 'flat', value: String((r.amount_cents ?? 0) / 100) };
}

/** What the fields hold for `p` (a new policy: 20% on every payment, for life). */
export function policyInput(p?: CommissionPolicy): PolicyInput {
  if (!p)
    return {
      rate: { type: 'percentage', value: '20' },
      mode: 'recurring',
      months: '',
      first: null,
      rules: [],
    };
  const first = p.recurring.first;
  return {
    rate: rateInput(p),
    mode: p.recurring.mode,
    months: p.recurring.months ? String(p.recurring.months) : '',
    first: first ? { ...rateInput(first), count: String(first.count) } : null,
    rules: p.product_rules.map((r) => ({ ...rateInput(r), product_id: r.product_id })),
  };
}

/** The typed rate as the API's fields; a bad number becomes a message the user can act on. */
function rateBody(r: RateInput, where: string): RateBody {
  const n = Number(r.value.trim().replace(',', '.'));
  if (r.value.trim() === '' || !Number.isFinite(n) || n < 0) {
    throw new Error(`${where}: enter a number of at least 0`);
  }
  return r.type === 'percentage'
    ? { type: 'percentage', percent: n }
    : { type: 'flat', amount_cents: Math.round(n * 100) };
}

const wholeNumber = (s: string) => (/^\s*-?\d+\s*$/.test(s) ? Number(s) : null);

/** The request's policy; throws an Error whose message names the field (`where` prefixes the rate's). */
export function policyBody(v: PolicyInput, where = 'Commission'): PolicyRequest {
  let months: number | null = null;
  if (v.mode === 'recurring' && v.months.trim() !== '') {
    months = wholeNumber(v.months);
    if (months === null || months < 1)
      throw new Error('Recurring months: enter a whole number, or leave empty');
  }
  let first: NonNullable<NonNullable<PolicyRequest['recurring']>['first']> | null = null;
  if (v.mode === 'recurring' && v.first) {
    const count = wholeNumber(v.first.count);
    if (count === null) throw new Error('First payments: enter a whole number of payments');
    first = { count, ...rateBody(v.first, 'Rate of the first payments') };
  }
  return {
    ...rateBody(v.rate, where),
    recurring: { mode: v.mode, months, first },
    product_rules: v.rules.map((r, i) => {
      if (!r.product_id.trim()) throw new Error(`Product rule ${i + 1}: enter a product id`);
      return { product_id: r.product_id.trim(), ...rateBody(r, `Product rule ${i + 1}`) };
    }),
  };
}

function RateFields(props: { rate: RateInput; onChange(r: RateInput): void; legend: string }) {
  return (
    <fieldset class="inline">
      <legend>{props.legend}</legend>
      <label>
        Type
        <select
          value={props.rate.type}
          onChange={(e) =>
            props.onChange({
              ...props.rate,
              type: (e.target as HTMLSelectElement).value as RateInput['type'],
            })
          }
        >
          <option value="percentage">Percentage of the sale</option>
          <option value="flat">Flat amount per sale</option>
        </select>
      </label>
      <label>
        {props.rate.type === 'percentage' ? 'Percent' : 'Amount'}
        <input
          inputMode="decimal"
          required
          value={props.rate.value}
          onInput={(e) => props.onChange({ ...props.rate, value: (e.target as HTMLInputElement).value })}
        />
      </label>
    </fieldset>
  );
}

/** The policy's fields: `legend` names its rate ("Commission"). */
export function PolicyFields(props: { value: PolicyInput; onChange(v: PolicyInput): void; legend?: string }) {
  const v = props.value;
  const set = (patch: Partial<PolicyInput>) => props.onChange({ ...v, ...patch });
  const setRule = (i: number, patch: Partial<RuleInput>) =>
    set({ rules: v.rules.map((x, j) => (j === i ? { ...x, ...patch } : x)) });
  return (
    <>
      <RateFields legend={props.legend ?? 'Commission'} rate={v.rate} onChange={(rate) => set({ rate })} />
      <fieldset class="inline">
        <legend>Recurring sales</legend>
        <label>
          Commission on
          <select
            value={v.mode}
            onChange={(e) => set({ mode: (e.target as HTMLSelectElement).value as PolicyInput['mode'] })}
          >
            <option value="recurring">Every payment (recurring)</option>
            <option value="one_time">The first payment only</option>
          </select>
        </label>
        {v.mode === 'recurring' && (
          <>
            <label>
              For how many months <span class="subtle">(empty: lifetime)</span>
              <input
                type="number"
                min={1}
                value={v.months}
                onInput={(e) => set({ months: (e.target as HTMLInputElement).value })}
              />
            </label>
            <label class="check own-line">
              <input
                type="checkbox"
                checked={v.first !== null}
                onChange={(e) =>
                  set({
                    first: (e.target as HTMLInputElement).checked
                      ? { type: v.rate.type, value: v.rate.value, count: '3' }
                      : null,
                  })
                }
              />
              A different rate for each customer's first payments
            </label>
          </>
        )}
        {v.mode === 'recurring' && v.first && (
          <div class="stepped">
            <label>
              Number of first payments
              <input
                type="number"
                min={1}
                max={120}
                required
                value={v.first.count}
                onInput={(e) => set({ first: { ...v.first!, count: (e.target as HTMLInputElement).value } })}
              />
            </label>
            <RateFields
              legend="Rate of the first payments"
              rate={v.first}
              onChange={(r) => set({ first: { ...v.first!, ...r } })}
            />
            <p class="subtle">Later payments earn the rate above.</p>
          </div>
        )}
      </fieldset>
      <fieldset>
        <legend>Per-product rules</legend>
        {v.rules.length === 0 && <p class="subtle">None: every product earns the commission above.</p>}
        {v.rules.map((r, i) => (
          <div class="rule" key={i}>
            <label>
              Product id (rule {i + 1})
              <input
                value={r.product_id}
                required
                onInput={(e) => setRule(i, { product_id: (e.target as HTMLInputElement).value })}
              />
            </label>
            <RateFields legend={`Rate of rule ${i + 1}`} rate={r} onChange={(nr) => setRule(i, nr)} />
            <button type="button" onClick={() => set({ rules: v.rules.filter((_, j) => j !== i) })}>
              Remove rule {i + 1}
            </button>
          </div>
        ))}
        <button
          type="button"
          onClick={() => set({ rules: [...v.rules, { product_id: '', type: 'percentage', value: '20' }] })}
        >
          Add a product rule
        </button>
      </fieldset>
    </>
  );
}
