// The processor connection's rules: what a PUT body means once its schema has passed, and what a
// workspace without a stored connection reads as.
import { randomBytes } from 'node:crypto';
import { maskSecret } from '../../../../shared/domain/secrets.ts';
import { iso } from '../../common.ts';
import type { ConnectionRow, ConnectionState, ProcessorEventRow } from './dal.ts';
import { ADAPTERS, PROCESSORS, UNKNOWN_PROCESSOR } from '../../../../shared/processors/index.ts';
import type { Processor } from '../../../../shared/processors/index.ts';
import { CONNECTION_STATUSES, PROCESSOR_OUTCOMES } from '../../../../shared/contracts/management.ts';

export { CONNECTION_STATUSES, PROCESSOR_OUTCOMES };
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];
export const FLAGS = ['charges_enabled', 'payouts_enabled', 'details_submitted'] as const;
export type Flag = (typeof FLAGS)[number];

export interface ConnectionInput extends ConnectionState {
  status: ConnectionStatus;
  flags: Record<Flag, boolean>;
}

/** The body replaces the stored state: an omitted or null account_id is null, an omitted flag false. */
export function connectionInput(b: {
  status: ConnectionStatus;
  account_id?: string | null;
  charges_enabled?: boolean | null;
  payouts_enabled?: boolean | null;
  details_submitted?: boolean | null;
}): ConnectionInput {
  const account = b.account_id?.trim();
  return {
    status: b.status,
    account_id: account === undefined ? null : account,
    flags: {
      charges_enabled: b.charges_enabled ?? false,
      payouts_enabled: b.payouts_enabled ?? false,
      details_submitted: b.details_submitted ?? false,
    },
  };
}

export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('base64url')}`;

/** How long a rolled secret keeps verifying, as Stripe does it. */
export const ROLL_GRACE_HOURS = 24;

export function toProcessorEvent(r: ProcessorEventRow) {
  return {
    id: Number(r.id),
    processor: r.processor,
    event_id: r.event_id,
    type: r.type,
    livemode: r.livemode,
    received_at: iso(r.received_at)!,
    outcome: r.outcome,
    reason: r.reason,
    transaction_id: r.transaction_id,
    sale_id: r.sale_id === null ? null : Number(r.sale_id),
    commission_id: r.commission_id === null ? null : Number(r.commission_id),
  };
}

export function toConnection(r: ConnectionRow) {
  return {
    status: r.status,
    account_id: r.account_id,
    charges_enabled: r.charges_enabled,
    payouts_enabled: r.payouts_enabled,
    details_submitted: r.details_submitted,
    connected_at: iso(r.connected_at),
  };
}

/** What GET answers: the stored connection without its secret, or a pending one when none is stored. */
export function connectionView(r: ConnectionRow | undefined) {
  if (!r) {
    return {
      status: 'pending',
      account_id: null,
      charges_enabled: false,
      payouts_enabled: false,
      details_submitted: false,
      connected_at: null,
      webhook_secret_masked: null,
    };
  }
  return { ...toConnection(r), webhook_secret_masked: maskSecret(r.webhook_secret) };
}

/** The processors a workspace connects (CONTRACT part three "Revenue from every processor"). */
export { PROCESSORS, UNKNOWN_PROCESSOR };

/** Why a pasted secret cannot be this processor's, or null: 1 to 255 characters, then its adapter's rule. */
export function secretError(processor: Processor, secret: string): string | null {
  if (secret.length < 1 || secret.length > 255)
    return 'webhook_secret must be a string of 1 to 255 characters';
  return ADAPTERS[processor].secretError(secret);
}

/** A secret shown back: enough to recognise it (a short one shows its last two characters only). */
export function maskProcessorSecret(secret: string): string {
  return secret.length >= 16 ? maskSecret(secret) : `…${secret.slice(-2)}`;
}

/** One processor's row of GET /api/advertiser/processor-connections. */
export function processorConnectionView(processor: Processor, secret: string | undefined, publicUrl: string) {
  return {
    processor,
    connected: secret !== undefined,
    secret_masked: secret === undefined ? null : maskProcessorSecret(secret),
    webhook_url: `${publicUrl.replace(/\/+$/, '')}/api/v1/webhooks/${processor}/{programId}`,
  };
}
