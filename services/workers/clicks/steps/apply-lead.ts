// The customer-journey step for leads (spec 4.2, section 3, CONTRACT "Lead without a click"). Leads travel
// on the clicks topic keyed by click_id, so a lead sent after its click's 200 is applied after the click.
import type { Tx } from '../../../../shared/db/sql.ts';
import type { LeadCommand } from '../../../../shared/contracts/commands.ts';
import { parseCommand } from '../../../../shared/contracts/commands.ts';
import type { Applied, ApplyContext, CommandApplier } from '../../../../shared/pipeline/command-handler.ts';
import { programWorkspaces, recordWebhookEvents } from '../../../../shared/db/webhook-events.ts';
import { leadView } from '../../../../shared/views/lead.ts';
import { CUSTOMER_KEY_COLUMNS, UNATTRIBUTED_KEYS, customerKeys } from '../../../../shared/rollups/rules.ts';
import type { CustomerKeyRow, DimensionKeys } from '../../../../shared/rollups/rules.ts';

const NOT_FOUND = 'Customer not found. Provide a valid click_id or customer_key.';
const KEY_TAKEN = 'customer_key already belongs to another customer of this program';

const isKeyTaken = (err: unknown): boolean => {
  const e = err as { code?: string; constraint_name?: string } | null;
  return e?.code === '23505' && e.constraint_name === 'customers_program_id_customer_key_key';
};

interface CustomerRow extends CustomerKeyRow {
  id: string;
  program_id: string;
  partner_id: string | null;
  customer_status: string;
  customer_key: string | null;
}

export interface LeadApplierOptions {
  /** KAFKA_PREFIX: the outbox topic of the `lead.created` webhook event. */
  kafkaPrefix: string;
}

export function createLeadApplier(opts: LeadApplierOptions): CommandApplier<LeadCommand> {
  return {
    kind: 'lead',
    parse: (bytes) => parseCommand<LeadCommand>(bytes, 'lead'),
    apply: (tx, cmd, ctx) => applyLead(tx, cmd, ctx, opts.kafkaPrefix),
  };
}

/** Inserts the lead event and records its `lead.created` webhook event in the same transaction. */
async function insertLeadEvent(
  tx: Tx,
  cmd: LeadCommand,
  programId: number,
  customer: { id: string | null; partner_id: string | null; customer_key: string | null },
  ctx: ApplyContext,
  kafkaPrefix: string,
  keys: DimensionKeys | null = null,
): Promise<string> {
  const customerId = customer.id;
  // The partner and link it counts under in the rollups, kept with it (0025): the rebuild counts it there
  // even after a code moves the customer to another partner.
  const [row] = await tx<{ id: string }[]>`
    insert into lead_events (request_id, program_id, customer_id, click_id, customer_key, email, event_name,
                             session_id, page_url, is_test, lead_timestamp, partner_key, link_key)
    values (${cmd.request_id}, ${programId}, ${customerId}, ${cmd.click_id}, ${cmd.customer_key}, ${cmd.email},
            ${cmd.event_name}, ${cmd.session_id}, ${cmd.page_url}, ${cmd.is_test}, ${new Date(cmd.ts)},
            ${keys?.partner ?? null}, ${keys?.link ?? null})
    returning id`;
  const workspace = (await programWorkspaces(tx, [programId], ctx.memo)).get(programId);
  if (workspace !== undefined) {
    const data = leadView({
      id: row!.id,
      program_id: programId,
      customer_id: customerId,
      partner_id: customer.partner_id,
      click_id: cmd.click_id,
      customer_key: cmd.customer_key ?? customer.customer_key,
      email: cmd.email,
      event_name: cmd.event_name,
      is_test: cmd.is_test,
      lead_timestamp: new Date(cmd.ts),
    });
    await recordWebhookEvents(
      tx,
      kafkaPrefix,
      [{ type: 'lead.created', workspace_id: workspace, program_id: programId, data }],
      ctx.memo,
    );
  }
  return row!.id;
}

async function applyLead(tx: Tx, cmd: LeadCommand, ctx: ApplyContext, kafkaPrefix: string): Promise<Applied> {
  const programOf = cmd.token_program_id ?? cmd.program_id_hint;
  const bad = (error: string): Applied => ({ programId: programOf, statusCode: 400, body: { error } });

  if (cmd.is_test) {
    // Test mode: an is_test lead event; no customer is created or changed.
    if (programOf === null) return bad('additional_data.program_id is required for a test lead');
    const none = { id: null, partner_id: null, customer_key: null };
    const eventId = await insertLeadEvent(tx, cmd, programOf, none, ctx, kafkaPrefix);
    return {
      programId: programOf,
      statusCode: 200,
      body: {
        success: true,
        message: 'Test lead recorded',
        data: { eventId, programId: programOf, test_mode: true },
      },
    };
  }

  let customer: CustomerRow | undefined;
  if (cmd.click_id !== null) {
    [customer] = await tx<CustomerRow[]>`
      select id, program_id, customer_status, customer_key, ${tx.unsafe(CUSTOMER_KEY_COLUMNS)}
      from customers where click_id = ${cmd.click_id} for no key update`;
    // A click_id that matches no customer is always a 400 (CONTRACT).
    if (!customer) return bad(NOT_FOUND);
  } else if (cmd.customer_key !== null && programOf !== null) {
    [customer] = await tx<CustomerRow[]>`
      select id, program_id, customer_status, customer_key, ${tx.unsafe(CUSTOMER_KEY_COLUMNS)} from customers
      where program_id = ${programOf} and customer_key = ${cmd.customer_key} for no key update`;
    if (!customer) {
      // Spec rule 6: a lead without a click is recorded, unattributed, in the token's (or given) program.
      const [created] = await tx<{ id: string }[]>`
        insert into customers (program_id, customer_status, customer_key, email, signup_date)
        values (${programOf}, 'lead', ${cmd.customer_key}, ${cmd.email}, ${new Date(cmd.ts)})
        on conflict (program_id, customer_key) do nothing
        returning id`;
      if (!created) return bad('Customer status cannot be updated to lead. Current status: lead');
      const unattributed = { id: created.id, partner_id: null, customer_key: cmd.customer_key };
      await insertLeadEvent(tx, cmd, programOf, unattributed, ctx, kafkaPrefix, UNATTRIBUTED_KEYS);
      ctx.rollups.add(programOf, cmd.ts, { leads: 1 }, UNATTRIBUTED_KEYS);
      return {
        programId: programOf,
        statusCode: 200,
        body: { success: true, message: 'Lead recorded without partner attribution' },
      };
    }
  } else {
    return bad(NOT_FOUND);
  }

  const programId = Number(customer.program_id);
  if (cmd.token_program_id !== null && programId !== cmd.token_program_id) {
    return bad('Customer does not belong to this program');
  }
  if (customer.customer_status !== 'click') {
    return bad(`Customer status cannot be updated to lead. Current status: ${customer.customer_status}`);
  }
  const update = (q: Tx) => q`
    update customers set customer_status = 'lead',
      customer_key = coalesce(${cmd.customer_key}, customer_key),
      email = coalesce(${cmd.email}, email),
      signup_date = ${new Date(cmd.ts)},
      updated_at = now()
    where id = ${customer.id}`;
  if (cmd.customer_key !== null && cmd.customer_key !== customer.customer_key) {
    const [taken] = await tx`
      select 1 from customers where program_id = ${programId} and customer_key = ${cmd.customer_key} and id <> ${customer.id}`;
    if (taken) return bad(KEY_TAKEN);
    // A concurrent lead (another partition) may take the key after the check: its unique violation is
    // this caller's 400, as if the check had seen it, never a dead letter.
    try {
      await tx.savepoint(update);
    } catch (err) {
      if (isKeyTaken(err)) return bad(KEY_TAKEN);
      throw err;
    }
  } else {
    await update(tx);
  }
  const keys = customerKeys(customer);
  await insertLeadEvent(tx, cmd, programId, customer, ctx, kafkaPrefix, keys);
  ctx.rollups.add(programId, cmd.ts, { leads: 1 }, keys);
  return { programId, statusCode: 200, body: { success: true, message: 'Lead recorded' } };
}
