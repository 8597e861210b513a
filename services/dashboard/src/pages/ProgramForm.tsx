// The program create / edit form: name, slug, cookie window, currency, the commission policy (rate,
// recurring, product rules) and the partner and payout settings (their own files). Used by Programs.tsx.
import { useState } from 'preact/hooks';
import { ErrorBox } from '../widgets.tsx';
import { messageOf, useAction } from '../hooks.ts';
import type { Program, ProgramFields } from '../program.tsx';
import type { Rate } from '../api.ts';
import { PartnerSettingsFields, partnerSettingsBody, partnerSettingsOf } from './ProgramPartnerFields.tsx';
import { PayoutSettingsFields, payoutSettingsBody, payoutSettingsOf } from './ProgramPayoutFields.tsx';

type Commission = NonNullable<ProgramFields['commission']>;
type RateBody = Pick<Commission, 'type' | 'percent' | 'amount_cents'>;

interface RateInput {
  type: 'percentage' | 'flat';
  /** Percent, or the flat amount in the currency's main unit, as typed. */
  value: string;
}
interface RuleInput extends RateInput {
  product_id: string;
}

function rateInput(r: Rate): RateInput {
  return r.type === 'percentage'
    ? { type: 'percentage', value: String(r.percent ?? 0) }
    : { type: 'flat', value: String((r.amount_cents ?? 0) / 100) };
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

export function ProgramForm(props: {
  title: string;
  submit: string;
  initial?: Program;
  onSubmit(body: ProgramFields): Promise<void>;
  onCancel(): void;
}) {
  const init = props.initial;
  const [name, setName] = useState(init?.name ?? '');
  const [slug, setSlug] = useState(init?.slug ?? '');
  const [days, setDays] = useState(String(init?.cookie_window_days ?? 60));
  const [currency, setCurrency] = useState(init?.currency ?? 'USD');
  const [rate, setRate] = useState<RateInput>(
    init ? rateInput(init.commission) : { type: 'percentage', value: '20' },
  );
  const [mode, setMode] = useState(init?.commission.recurring.mode ?? 'recurring');
  const [months, setMonths] = useState(
    init?.commission.recurring.months ? String(init.commission.recurring.months) : '',
  );
  const [rules, setRules] = useState<RuleInput[]>(
    init?.commission.product_rules.map((r) => ({ ...rateInput(r), product_id: r.product_id })) ?? [],
  );
  const [origins, setOrigins] = useState(init?.allowed_origins.join('\n') ?? '');
  const [partnerSettings, setPartnerSettings] = useState(partnerSettingsOf(init));
  const [payoutSettings, setPayoutSettings] = useState(payoutSettingsOf(init));
  const submit = useAction();

  const body = (): ProgramFields => {
    const d = Number(days);
    if (!Number.isInteger(d) || d < 1) throw new Error('Attribution window: enter a whole number of days');
    let m: number | null = null;
    if (mode === 'recurring' && months.trim() !== '') {
      m = Number(months);
      if (!Number.isInteger(m) || m < 1)
        throw new Error('Recurring months: enter a whole number, or leave empty');
    }
    const commission: Commission = {
      ...rateBody(rate, 'Commission'),
      recurring: { mode, months: mode === 'recurring' ? m : null },
      product_rules: rules.map((r, i) => {
        if (!r.product_id.trim()) throw new Error(`Product rule ${i + 1}: enter a product id`);
        return { product_id: r.product_id.trim(), ...rateBody(r, `Product rule ${i + 1}`) };
      }),
    };
    const out: ProgramFields = {
      name,
      cookie_window_days: d,
      currency: currency.trim().toUpperCase(),
      commission,
      allowed_origins: origins
        .split(/[\s,]+/)
        .map((o) => o.trim())
        .filter(Boolean),
      ...partnerSettingsBody(partnerSettings),
      ...payoutSettingsBody(payoutSettings),
    };
    if (slug.trim()) out.slug = slug.trim();
    return out;
  };

  return (
    <form
      class="panel"
      aria-label={props.title}
      onSubmit={(e) => {
        e.preventDefault();
        submit.setError(null);
        let b: ProgramFields;
        try {
          b = body();
        } catch (err) {
          submit.setError(messageOf(err));
          return;
        }
        void submit.run(() => props.onSubmit(b));
      }}
    >
      <h2>{props.title}</h2>
      <div class="grid">
        <label>
          Name
          <input
            value={name}
            required
            maxLength={200}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Slug <span class="subtle">(optional: made from the name)</span>
          <input value={slug} onInput={(e) => setSlug((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Attribution window (days)
          <input
            type="number"
            min={1}
            max={3650}
            required
            value={days}
            onInput={(e) => setDays((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Currency <span class="subtle">(ISO 4217, e.g. USD, EUR)</span>
          <input
            value={currency}
            required
            maxLength={3}
            onInput={(e) => setCurrency((e.target as HTMLInputElement).value)}
          />
        </label>
      </div>
      <RateFields legend="Commission" rate={rate} onChange={setRate} />
      <fieldset class="inline">
        <legend>Recurring sales</legend>
        <label>
          Commission on
          <select
            value={mode}
            onChange={(e) => setMode((e.target as HTMLSelectElement).value as 'one_time' | 'recurring')}
          >
            <option value="recurring">Every payment (recurring)</option>
            <option value="one_time">The first payment only</option>
          </select>
        </label>
        {mode === 'recurring' && (
          <label>
            For how many months <span class="subtle">(empty: lifetime)</span>
            <input
              type="number"
              min={1}
              value={months}
              onInput={(e) => setMonths((e.target as HTMLInputElement).value)}
            />
          </label>
        )}
      </fieldset>
      <fieldset>
        <legend>Per-product rules</legend>
        {rules.length === 0 && <p class="subtle">None: every product earns the commission above.</p>}
        {rules.map((r, i) => (
          <div class="rule" key={i}>
            <label>
              Product id (rule {i + 1})
              <input
                value={r.product_id}
                required
                onInput={(e) =>
                  setRules(
                    rules.map((x, j) =>
                      j === i ? { ...x, product_id: (e.target as HTMLInputElement).value } : x,
                    ),
                  )
                }
              />
            </label>
            <RateFields
              legend={`Rate of rule ${i + 1}`}
              rate={r}
              onChange={(nr) => setRules(rules.map((x, j) => (j === i ? { ...x, ...nr } : x)))}
            />
            <button type="button" onClick={() => setRules(rules.filter((_, j) => j !== i))}>
              Remove rule {i + 1}
            </button>
          </div>
        ))}
        <button
          type="button"
          onClick={() => setRules([...rules, { product_id: '', type: 'percentage', value: '20' }])}
        >
          Add a product rule
        </button>
      </fieldset>
      <label>
        Allowed origins{' '}
        <span class="subtle">
          (one per line, e.g. https://shop.example.com; the sites the tracker runs on)
        </span>
        <textarea
          rows={3}
          value={origins}
          onInput={(e) => setOrigins((e.target as HTMLTextAreaElement).value)}
        />
      </label>
      <PartnerSettingsFields value={partnerSettings} onChange={setPartnerSettings} />
      <PayoutSettingsFields value={payoutSettings} currency={currency} onChange={setPayoutSettings} />
      <ErrorBox error={submit.error} />
      <p class="actions">
        <button type="submit" class="primary" disabled={submit.busy}>
          {submit.busy ? 'Saving…' : props.submit}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </p>
    </form>
  );
}
