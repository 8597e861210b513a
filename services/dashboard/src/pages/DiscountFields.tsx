// A group's discount for the customers its partners bring (CONTRACT part four "Discounts"): the processor coupon
// the advertiser created for the group, percentage or flat, once, for some months or forever, and its id at
// each processor. The group form's fieldset, and the words the Groups table shows. Numbers that are not numbers
// are refused here; ranges are the API's to check (`discount.percent must be more than 0 …`).
import type { Group } from '../groups.ts';
import type { RequestBody } from '../api.ts';
import { money } from '../format.ts';
import { PROCESSOR_NAMES, PROCESSOR_TITLES } from '../processors.ts';
import type { ProcessorName } from '../processors.ts';

type Discount = NonNullable<Group['discount']>;
type DiscountBody = NonNullable<
  RequestBody<'post', '/api/advertiser/affiliate-programs/{id}/groups'>['discount']
>;

const PROCESSORS = PROCESSOR_NAMES.map((key) => ({
  key,
  label: key === 'stripe' ? 'Stripe coupon or promotion code id' : `${PROCESSOR_TITLES[key]} discount id`,
}));
type ProcessorKey = ProcessorName;

export interface DiscountInput {
  on: boolean;
  type: 'percentage' | 'flat';
  /** Percent, or the amount in the currency's main unit, as typed. */
  value: string;
  duration: 'once' | 'repeating' | 'forever';
  months: string;
  ids: Record<ProcessorKey, string>;
}

export function discountInput(d: Discount | null | undefined): DiscountInput {
  const ids = Object.fromEntries(PROCESSOR_NAMES.map((p) => [p, ''])) as Record<ProcessorKey, string>;
  if (!d) return { on: false, type: 'percentage', value: '10', duration: 'once', months: '', ids };
  for (const p of PROCESSORS) ids[p.key] = d.processor_ids[p.key] ?? '';
  return {
    on: true,
    type: d.type,
    value: d.type === 'percentage' ? String(d.percent ?? 0) : String((d.amount_cents ?? 0) / 100),
    duration: d.duration,
    months: d.months === null ? '' : String(d.months),
    ids,
  };
}

/** The request's `discount` (null: none); throws with a message naming the field. */
export function discountBody(v: DiscountInput): DiscountBody | null {
  if (!v.on) return null;
  const n = Number(v.value.trim().replace(',', '.'));
  if (v.value.trim() === '' || !Number.isFinite(n)) throw new Error('Discount: enter a number');
  let months: number | null = null;
  if (v.duration === 'repeating') {
    if (!/^\s*-?\d+\s*$/.test(v.months)) throw new Error('Discount months: enter a whole number');
    months = Number(v.months);
  }
  const processor_ids: Partial<Record<ProcessorKey, string>> = {};
  for (const p of PROCESSORS) if (v.ids[p.key].trim()) processor_ids[p.key] = v.ids[p.key].trim();
  return {
    type: v.type,
    ...(v.type === 'percentage' ? { percent: n } : { amount_cents: Math.round(n * 100) }),
    duration: v.duration,
    months,
    processor_ids,
  };
}

/** "10% off, the first payment", "€5.00 off, for 3 months", "20% off, forever"; '—' without one. */
export function discountText(d: Group['discount'], currency: string): string {
  if (!d) return '—';
  const off =
    d.type === 'percentage' ? `${d.percent ?? 0}% off` : `${money(d.amount_cents ?? 0, currency)} off`;
  const when =
    d.duration === 'once'
      ? 'the first payment'
      : d.duration === 'forever'
        ? 'forever'
        : `for ${d.months ?? 0} ${d.months === 1 ? 'month' : 'months'}`;
  return `${off}, ${when}`;
}

/** The processors the discount names ("Stripe, Paddle"), or ''. */
export function discountProcessors(d: Group['discount']): string {
  if (!d) return '';
  return PROCESSORS.filter((p) => d.processor_ids[p.key])
    .map((p) => PROCESSOR_TITLES[p.key])
    .join(', ');
}

export function DiscountFields(props: {
  value: DiscountInput;
  currency: string;
  onChange(v: DiscountInput): void;
}) {
  const v = props.value;
  const set = (patch: Partial<DiscountInput>) => props.onChange({ ...v, ...patch });
  return (
    <fieldset class="inline discount">
      <legend>Discount for the customers they bring</legend>
      <label class="check own-line">
        <input
          type="checkbox"
          checked={v.on}
          onChange={(e) => set({ on: (e.target as HTMLInputElement).checked })}
        />
        Offer a discount <span class="subtle">(the coupon you created at your processor)</span>
      </label>
      {v.on && (
        <>
          <label>
            Discount type
            <select
              value={v.type}
              onChange={(e) => set({ type: (e.target as HTMLSelectElement).value as DiscountInput['type'] })}
            >
              <option value="percentage">Percentage off</option>
              <option value="flat">Amount off</option>
            </select>
          </label>
          <label>
            {v.type === 'percentage' ? 'Percent off' : `Amount off (${props.currency})`}
            <input
              inputMode="decimal"
              required
              value={v.value}
              onInput={(e) => set({ value: (e.target as HTMLInputElement).value })}
            />
          </label>
          <label>
            Applies to
            <select
              value={v.duration}
              onChange={(e) =>
                set({ duration: (e.target as HTMLSelectElement).value as DiscountInput['duration'] })
              }
            >
              <option value="once">The first payment</option>
              <option value="repeating">Some months</option>
              <option value="forever">Every payment</option>
            </select>
          </label>
          {v.duration === 'repeating' && (
            <label>
              Months
              <input
                type="number"
                min={1}
                required
                value={v.months}
                onInput={(e) => set({ months: (e.target as HTMLInputElement).value })}
              />
            </label>
          )}
          <div class="processor-ids">
            {PROCESSORS.map((p) => (
              <label>
                {p.label} <span class="subtle">(optional)</span>
                <input
                  value={v.ids[p.key]}
                  maxLength={200}
                  onInput={(e) => set({ ids: { ...v.ids, [p.key]: (e.target as HTMLInputElement).value } })}
                />
              </label>
            ))}
          </div>
        </>
      )}
    </fieldset>
  );
}
