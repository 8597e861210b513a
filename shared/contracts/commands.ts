// Commands with an answer (lead, sale, refund) and the messages of the effect topics the effect workers
// consume: ledger entries (the entries a command publishes after its commit; the order they apply in and
// what they do to a balance: shared/ledger/rules.ts) and notifications, which come from the outbox
// (shared/db/notifications.ts). The ingress validates the request and produces the command with a
// request_id; the owning worker applies it and records the outcome under that request_id (shared/outcomes.ts).
import { isId } from '../domain/ids.ts';
import { decodeMessageObject, isPlainObject } from '../json.ts';
import type { ProcessorEventCommand } from './processor-events.ts';

/**
 * With an Idempotency-Key, the ingress adds the hash of the request's parameters (services/ingress/commands/
 * answer.ts); the worker records it with the outcome, so a reuse of the key with other parameters is told
 * apart from a retry and refused (CONTRACT "Retries and idempotency").
 */
export interface Fingerprinted {
  request_hash?: string | null;
  /**
   * The SHA-256 (hex) of the tracking token the request authenticated with, when the command's program
   * came from it. The worker refuses the command (401) if that is no longer the program's live token: the
   * ingress's cache may be a poll behind a regeneration or a deletion (spec 4.8).
   */
  token_hash?: string | null;
}

export interface LeadCommand extends Fingerprinted {
  v: 1;
  type: 'lead';
  request_id: string;
  ts: number;
  /** Program of the tracking token (server mode); null in browser mode. */
  token_program_id: number | null;
  /** additional_data.program_id: the program of a browser-mode lead without click, and of test leads. */
  program_id_hint: number | null;
  click_id: string | null;
  customer_key: string | null;
  email: string | null;
  event_name: string | null;
  session_id: string | null;
  page_url: string | null;
  is_test: boolean;
}

export interface SaleCommand extends Fingerprinted {
  v: 1;
  type: 'sale';
  request_id: string;
  ts: number;
  program_id: number;
  transaction_id: string;
  amount_cents: number;
  /** ISO 4217; null (omitted) means the program's currency. A sale is always in its program's currency. */
  currency: string | null;
  customer_key: string | null;
  click_id: string | null;
  sale_type: 'payment' | 'subscription';
  line_items: unknown;
  is_recurring: boolean;
  subscription_id: string | null;
  subscription_interval: 'monthly' | 'quarterly' | 'annual' | null;
  product_id: string | null;
  is_test: boolean;
  /** A partner code the sale names (API `coupon_code`, checkout custom data `svc_coupon_code`, Polar `discount.code`); matched case-insensitively. */
  coupon_code?: string | null;
  /** The processor's discount ids on the sale (Stripe promotion_code ids, Paddle/Polar discount_id), matched against a code's processor_ids; `processor` is an adapter's name (shared/processors/index.ts). */
  coupon_refs?: { processor: string; ids: string[] } | null;
}

export interface RefundCommand extends Fingerprinted {
  v: 1;
  type: 'refund';
  request_id: string;
  ts: number;
  program_id: number;
  transaction_id: string;
  /** null = full refund (omitted or 0). */
  refund_amount_cents: number | null;
  refund_reason: string | null;
}

export type Command = LeadCommand | SaleCommand | RefundCommand | ProcessorEventCommand;

/** The program a tracking token must belong to for this command (null: none; processor events have none). */
export function tokenProgramOf(cmd: Command): number | null {
  if (cmd.type === 'processor_event') return null;
  return cmd.type === 'lead' ? cmd.token_program_id : cmd.program_id;
}

/** The program a command's tracking token must still belong to (null: it carries no token). */
export function tokenCheckOf(cmd: Command): { programId: number; tokenHash: string } | null {
  if (cmd.type === 'processor_event' || !cmd.token_hash) return null;
  const programId = tokenProgramOf(cmd);
  return programId === null ? null : { programId, tokenHash: cmd.token_hash };
}

/** A balance movement, applied once by the ledger worker (entry_key is unique). */
export interface LedgerEffect {
  topic: 'ledger';
  entry_key: string;
  kind:
    | 'commission_created'
    | 'commission_reversed'
    | 'commission_refunded'
    | 'commission_paid'
    | 'clawback_recovered';
  partner_id: number;
  partner_program_id: number;
  /** Null only for a payout's `clawback_recovered` entry, which belongs to no commission. */
  commission_id: number | null;
  /** The payout a payment or a recovery belongs to (docs/payouts.md); absent for every other entry. */
  payout_id?: number | null;
  /** Signed cents: positive credits the partner, negative deducts. */
  amount_cents: number;
  /** A deduction stops at a zero balance unless the commission had been paid (spec 3, balance rule). */
  clamp_at_zero: boolean;
}

/**
 * A notification as the outbox carries it to the notification worker (shared/db/notifications.ts
 * `queueNotifications`), which stores it once per notification_key and mails it when `mail` is set.
 */
export interface NotificationEffect {
  topic: 'notifications';
  /** Unique: a notification queued twice (a redelivered command, a retried request) is stored and mailed once. */
  notification_key: string;
  recipient_type: 'partner' | 'advertiser';
  /** The partner it is about (a partner notification's recipient). */
  partner_id: number | null;
  /** The workspace it is addressed to (an advertiser notification's recipient). */
  workspace_id: number | null;
  program_id: number | null;
  kind: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
  /** Also mail it (CONTRACT "Mail": invites, applications, payouts, refunds, a disabled webhook). */
  mail?: boolean;
}

/**
 * A message of an effect topic. Commands publish only ledger entries (Applied.effects); outcomes recorded
 * before notifications moved to the outbox may still hold notification effects, which are not published
 * again (command-handler.ts `publish`).
 */
export type Effect = LedgerEffect | NotificationEffect;

const str = (v: unknown): v is string => typeof v === 'string';
const nstr = (v: unknown): v is string | null => v === null || typeof v === 'string';

function decode(bytes: Buffer | null): Record<string, unknown> | string {
  // The ingress never sends an unstorable string or a deep value (see installJsonHandling); a string
  // Postgres would refuse or alter could not be matched on again (a transaction_id stored as U+FFFD), and a
  // deep value would overflow the stack of whatever walks it.
  const m = decodeMessageObject(bytes);
  if (typeof m === 'string') return m;
  if (m.v !== 1) return `unsupported version ${String(m.v)}`;
  // `<kind>:<program id>:<Idempotency-Key of up to 200 characters>` or a UUID.
  if (!str(m.request_id) || m.request_id.length === 0 || m.request_id.length > 256) return 'bad request_id';
  if (typeof m.ts !== 'number' || !Number.isSafeInteger(m.ts)) return 'bad ts';
  if (!(m.request_hash === undefined || m.request_hash === null || isRequestHash(m.request_hash))) {
    return 'bad request_hash';
  }
  if (!(m.token_hash === undefined || m.token_hash === null || isRequestHash(m.token_hash))) {
    return 'bad token_hash';
  }
  return m;
}

const isRequestHash = (v: unknown): v is string => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);

/** The request_hash of a message, when it has a well-formed one (recorded with a poison command's 500). */
export function requestHashOf(bytes: Buffer | null): string | null {
  try {
    const m = JSON.parse(bytes?.toString('utf8') ?? '') as unknown;
    return isPlainObject(m) && isRequestHash(m.request_hash) ? m.request_hash : null;
  } catch {
    return null;
  }
}

/** The request_id of a message, when it has one, so a poison command can still be answered. */
export function requestIdOf(bytes: Buffer | null): string | null {
  try {
    const m = JSON.parse(bytes?.toString('utf8') ?? '') as unknown;
    return isPlainObject(m) && str(m.request_id) ? m.request_id : null;
  } catch {
    return null;
  }
}

export function parseLead(m: Record<string, unknown>): LeadCommand | string {
  if (!(m.token_program_id === null || isId(m.token_program_id))) return 'bad token_program_id';
  if (!(m.program_id_hint === null || isId(m.program_id_hint))) return 'bad program_id_hint';
  for (const k of ['click_id', 'customer_key', 'email', 'event_name', 'session_id', 'page_url'] as const) {
    if (!nstr(m[k])) return `bad ${k}`;
  }
  if (typeof m.is_test !== 'boolean') return 'bad is_test';
  return m as unknown as LeadCommand;
}

export function parseSale(m: Record<string, unknown>): SaleCommand | string {
  if (!isId(m.program_id)) return 'bad program_id';
  if (!str(m.transaction_id) || m.transaction_id === '') return 'bad transaction_id';
  if (typeof m.amount_cents !== 'number' || !Number.isSafeInteger(m.amount_cents) || m.amount_cents < 0) {
    return 'bad amount_cents';
  }
  if (!(m.currency === null || (str(m.currency) && /^[A-Z]{3}$/.test(m.currency)))) return 'bad currency';
  if (m.sale_type !== 'payment' && m.sale_type !== 'subscription') return 'bad sale_type';
  for (const k of ['customer_key', 'click_id', 'subscription_id', 'product_id'] as const) {
    if (!nstr(m[k])) return `bad ${k}`;
  }
  if (![null, 'monthly', 'quarterly', 'annual'].includes(m.subscription_interval as string | null)) {
    return 'bad subscription_interval';
  }
  if (typeof m.is_recurring !== 'boolean' || typeof m.is_test !== 'boolean') return 'bad flags';
  return m as unknown as SaleCommand;
}

export function parseRefund(m: Record<string, unknown>): RefundCommand | string {
  if (!isId(m.program_id)) return 'bad program_id';
  if (!str(m.transaction_id) || m.transaction_id === '') return 'bad transaction_id';
  if (!(m.refund_amount_cents === null || isId(m.refund_amount_cents))) return 'bad refund_amount_cents';
  if (!nstr(m.refund_reason)) return 'bad refund_reason';
  return m as unknown as RefundCommand;
}

export function parseCommand<T extends Command>(bytes: Buffer | null, type: T['type']): T | string {
  const m = decode(bytes);
  if (typeof m === 'string') return m;
  if (m.type !== type) return `expected a ${type} command, got ${String(m.type)}`;
  const parsed = type === 'lead' ? parseLead(m) : type === 'sale' ? parseSale(m) : parseRefund(m);
  return parsed as T | string;
}

export function parseEffect(bytes: Buffer | null): Effect | string {
  if (!bytes || bytes.length === 0) return 'empty message';
  let m: unknown;
  try {
    m = JSON.parse(bytes.toString('utf8'));
  } catch {
    return 'not JSON';
  }
  if (!isPlainObject(m)) return 'not a JSON object';
  if (m.topic === 'ledger') {
    if (!str(m.entry_key) || !isId(m.partner_id) || !isId(m.partner_program_id) || !isId(m.commission_id)) {
      return 'bad ledger entry ids';
    }
    if (
      !['commission_created', 'commission_reversed', 'commission_refunded', 'commission_paid'].includes(
        m.kind as string,
      )
    ) {
      return 'bad ledger kind';
    }
    if (typeof m.amount_cents !== 'number' || !Number.isSafeInteger(m.amount_cents))
      return 'bad amount_cents';
    if (typeof m.clamp_at_zero !== 'boolean') return 'bad clamp_at_zero';
    return m as unknown as LedgerEffect;
  }
  if (m.topic === 'notifications') {
    if (!str(m.notification_key) || !str(m.kind) || !str(m.title) || !str(m.body)) return 'bad notification';
    if (m.recipient_type !== 'partner' && m.recipient_type !== 'advertiser') return 'bad recipient_type';
    for (const k of ['partner_id', 'workspace_id', 'program_id'] as const) {
      if (!(m[k] === null || m[k] === undefined || isId(m[k]))) return `bad ${k}`;
    }
    if (m.mail !== undefined && typeof m.mail !== 'boolean') return 'bad mail';
    return m as unknown as NotificationEffect;
  }
  return `unknown effect topic ${String(m.topic)}`;
}
