// A program's payout settings (CONTRACT part two "Holding, reviewing and paying out"): how many days a
// commission is held before it is payable (the refund window) and the smallest payout, entered in currency
// units and sent as cents. The fields of the program form and the lines of its card.
import { money } from '../format.ts';
import type { Program } from '../program.tsx';

export interface PayoutSettings {
  /** As typed: whole days. */
  hold_days: string;
  /** As typed: currency units ("25" or "25.50"). */
  min_payout: string;
}

/** The API's defaults for a new program (hold_days 30, min_payout_cents 0). */
export function payoutSettingsOf(p: Program | undefined): PayoutSettings {
  return {
    hold_days: String(p?.hold_days ?? 30),
    min_payout: String((p?.min_payout_cents ?? 0) / 100),
  };
}

/**
 * The request fields. What is not a number at all is refused here with a message that names the field;
 * the range (0..365 days, 0..) is the API's to check, so its 400 is what the form shows.
 */
export function payoutSettingsBody(s: PayoutSettings): { hold_days: number; min_payout_cents: number } {
  const days = s.hold_days.trim();
  if (!/^-?\d+$/.test(days)) throw new Error('Hold period: enter a whole number of days');
  const min = s.min_payout.trim().replace(',', '.');
  const n = Number(min);
  if (min === '' || !Number.isFinite(n)) throw new Error('Minimum payout: enter an amount, e.g. 50 or 0');
  if (!/^-?\d+(\.\d{1,2})?$/.test(min)) throw new Error('Minimum payout: at most two decimals');
  return { hold_days: Number(days), min_payout_cents: Math.round(n * 100) };
}

export function PayoutSettingsFields(props: {
  value: PayoutSettings;
  currency: string;
  onChange(v: PayoutSettings): void;
}) {
  const v = props.value;
  return (
    <fieldset class="inline">
      <legend>Payouts</legend>
      <label>
        Hold period (days) <span class="subtle">(refund window before a commission is payable)</span>
        <input
          type="number"
          step={1}
          value={v.hold_days}
          onInput={(e) => props.onChange({ ...v, hold_days: (e.target as HTMLInputElement).value })}
        />
      </label>
      <label>
        Minimum payout ({props.currency.trim().toUpperCase() || 'currency'}){' '}
        <span class="subtle">(smaller amounts carry over)</span>
        <input
          inputMode="decimal"
          value={v.min_payout}
          onInput={(e) => props.onChange({ ...v, min_payout: (e.target as HTMLInputElement).value })}
        />
      </label>
    </fieldset>
  );
}

/** The card's lines: the hold and the minimum. */
export function PayoutSettingsFacts(props: { program: Program }) {
  const p = props.program;
  return (
    <>
      <dt>Hold period</dt>
      <dd>
        {p.hold_days ?? 30} {(p.hold_days ?? 30) === 1 ? 'day' : 'days'}
      </dd>
      <dt>Minimum payout</dt>
      <dd>{money(p.min_payout_cents ?? 0, p.currency)}</dd>
    </>
  );
}
