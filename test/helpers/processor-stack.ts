// A program with one processor's secret connected, a partner link, customers made the way an integrator
// makes them, and the outcome rows of processor events: what the per-processor integration tests share.
import type { Sql } from '../../shared/db/sql.ts';
import { createLink, createProgram, postJson, waitFor } from './stack.ts';

export async function processorProgram(
  sql: Sql,
  baseUrl: string,
  processor: 'paddle' | 'lemonsqueezy' | 'polar',
  secret: string,
) {
  const program = await createProgram(sql);
  await sql`update programs set commission = ${sql.json({ type: 'percentage', percent: 10 })} where id = ${program.id}`;
  await sql`
    insert into processor_secrets (workspace_id, processor, webhook_secret)
    select workspace_id, ${processor}, ${secret} from programs where id = ${program.id}`;
  const link = await createLink(sql, program.id);

  /** A customer with `key`: a click, then a lead. */
  async function customer(key: string): Promise<string> {
    const c = await postJson(`${baseUrl}/api/v1/track/click`, {
      affiliate_url: `https://shop.example/?aff=${link.shortLink}`,
    });
    const clickId = c.body.click_id as string;
    const l = await postJson(`${baseUrl}/api/v1/track/lead`, { click_id: clickId, customer_key: key });
    if (l.status !== 200) throw new Error(`lead failed: ${JSON.stringify(l.body)}`);
    return clickId;
  }

  interface Row {
    outcome: string;
    reason: string | null;
    transaction_id: string | null;
    sale_id: string | null;
    commission_id: string | null;
  }
  /** The event's outcome row once it has one (other than `not`). */
  const outcomeOf = (eventId: string, not = 'none') =>
    waitFor(
      `outcome of ${processor} ${eventId}`,
      async () => {
        const [r] = await sql<Row[]>`
          select outcome, reason, transaction_id, sale_id, commission_id from processor_events
          where program_id = ${program.id} and processor = ${processor} and event_id = ${eventId}`;
        return r && r.outcome !== not ? r : null;
      },
      60_000,
    );

  const salesOf = (txn: string) =>
    sql<
      {
        id: string;
        amount_cents: number;
        is_test: boolean;
        is_recurring: boolean;
        sale_type: string;
        subscription_id: string | null;
      }[]
    >`
      select id, amount_cents::int, is_test, is_recurring, sale_type, subscription_id from sales
      where program_id = ${program.id} and transaction_id = ${txn}`;

  const commission = async (id: string | null) => {
    const [c] = await sql<{ status: string; amount_cents: number; deducted_cents: number }[]>`
      select status, amount_cents::int, deducted_cents::int from commissions where id = ${id}`;
    return c;
  };

  const post = async (
    body: string,
    headers: Record<string, string>,
    programId: number | string = program.id,
  ) => {
    const res = await fetch(`${baseUrl}/api/v1/webhooks/${processor}/${programId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  return { program, customer, outcomeOf, salesOf, commission, post };
}
