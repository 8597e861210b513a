// What a partner earns in a program and how to earn more (CONTRACT part four): their group and its rate (the
// programs answer's `commission`: their own, else their group's, else the program's), a progress bar towards the
// next tier (`tier`: the first rule up from their group; null when there is none or the advertiser locked them)
// and the running bonuses of their group with their progress (`bonuses`). Money in the program's currency.
import type { PartnerProgram } from '../programs.ts';
import { commissionText, rateWords } from '../parts.tsx';
import { dateTime, money } from '../../format.ts';
import { bonusPeriodText, metricAmount, metricValue } from '../../rewards.ts';
import { ProgressBar } from '../../progress.tsx';

/** "this month (UTC)" for a monthly window; nothing for a lifetime one. */
const windowWords = (w: string) => (w === 'calendar_month' ? ' this month (UTC)' : '');

/** What is left to reach a threshold: "€580.00" or "3 customers". */
const toGo = (metric: string, left: number, cur: string) =>
  metric === 'customers' ? metricAmount(metric, left, cur) : metricValue(metric, left, cur);

export function RewardsPanel({ p }: { p: PartnerProgram }) {
  const cur = p.program.currency;
  const tier = p.tier;
  return (
    <section aria-labelledby="group-heading" class="rewards">
      <h2 id="group-heading">Your group and rate</h2>
      <dl class="facts">
        <dt>Group</dt>
        <dd data-testid="group">{p.group.name}</dd>
        <dt>Your rate</dt>
        <dd data-testid="rate">{commissionText(p.commission, cur)}</dd>
        {p.commission.product_rules.map((r) => (
          <>
            <dt>
              Product <code>{r.product_id}</code>
            </dt>
            <dd>{rateWords(r, cur)}</dd>
          </>
        ))}
      </dl>
      {tier && (
        <div class="tier" data-testid="tier">
          <h3>
            Next: {tier.next_group_name}
            <span class="subtle">
              {' '}
              at {metricAmount(tier.metric, tier.threshold, cur)}
              {tier.window === 'calendar_month' ? ' in a calendar month (UTC)' : ''}
            </span>
          </h3>
          <ProgressBar
            label={`Progress towards ${tier.next_group_name}`}
            value={tier.value}
            max={tier.threshold}
            text={`${metricValue(tier.metric, tier.value, cur)} of ${metricValue(tier.metric, tier.threshold, cur)}${windowWords(tier.window)}`}
          />
          <p class="subtle">
            {tier.value >= tier.threshold
              ? `You reached it: your next sale moves you to ${tier.next_group_name}.`
              : `${toGo(tier.metric, tier.threshold - tier.value, cur)} to go; sales after the move earn ${tier.next_group_name}'s rate.`}
          </p>
        </div>
      )}
      {p.bonuses.length > 0 && (
        <>
          <h3>Bonuses in progress</h3>
          <ul class="bonus-progress">
            {p.bonuses.map((b) => (
              <li key={b.id} data-testid="bonus">
                <strong>{b.name}</strong>: a {money(b.amount_cents, cur)} bonus at{' '}
                {metricAmount(b.metric, b.threshold, cur)}
                {b.period === 'calendar_month' ? `, ${bonusPeriodText(b.period)}` : ''}{' '}
                <span class="subtle">(until {dateTime(b.ends_at)})</span>{' '}
                {b.awarded && <span class="badge approved">earned</span>}
                <ProgressBar
                  label={`Progress towards ${b.name}`}
                  value={b.value}
                  max={b.threshold}
                  done={b.awarded}
                  text={`${metricValue(b.metric, b.value, cur)} of ${metricValue(b.metric, b.threshold, cur)}${b.period === 'calendar_month' ? ' this month (UTC)' : ''}`}
                />
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
