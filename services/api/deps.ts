// What the API's route modules receive from the process that hosts them.
import type { FastifyInstance } from 'fastify';
import type { Sql } from '../../shared/db/sql.ts';
import type { AddressPolicy } from '../../shared/webhooks/address.ts';

export interface ApiDeps {
  sql: Sql;
  /** Lifetime of a dashboard session. */
  sessionTtlHours: number;
  /** KAFKA_PREFIX: the outbox topics' names (shared/db/outbox.ts `outboxTopic`). */
  kafkaPrefix: string;
  /** PUBLIC_URL: the base of links in answers and mail (invite_url, magic links). */
  publicUrl: string;
  /**
   * The origin browser writes with a session cookie must come from (cross-site.ts): PUBLIC_URL's when
   * PUBLIC_URL is set; null or omitted: the origin each request was sent to.
   */
  publicOrigin?: string | null;
  /** WEBHOOK_ALLOW_PRIVATE and WEBHOOK_RESOLVE: the SSRF rules a webhook URL is registered under. */
  webhookPolicy?: AddressPolicy;
  /**
   * The limits of sign-in, signup and magic-link requests (sign-in-limits.ts; docs/security.md "Sign-in
   * limits and password hashing"); omitted: the defaults of shared/config-sign-in.ts.
   */
  signInLimits?: SignInLimits;
  /**
   * Applications from public program pages per IP and minute (0 = off) and the IPs exempt from it
   * (RATE_LIMIT_EXEMPT; docs/partners.md "Rate limits"); omitted: 10, none.
   */
  partnerLimits?: {
    applyPerMinute: number;
    exempt: string[];
  };
  /**
   * Imports (docs/importing.md): IMPORT_SECRET_KEY, which seals a source's credentials (null: imports from
   * Rewardful and Dub answer 503), and IMPORT_CSV_MAX_BYTES; omitted: none, 10 MB.
   */
  imports?: { secretKey: Buffer | null; csvMaxBytes: number };
}

/** The limits of sign-in-limits.ts, from shared/config-sign-in.ts (which says what each one is). */
export interface SignInLimits {
  /** Password checks per address and minute (also the burst); 0 = off. */
  ipPerMinute: number;
  /** Failed password checks (and signups) per email within failureWindowMs; 0 = off. */
  failuresPerEmail: number;
  failureWindowMs: number;
  /** Magic-link requests per email and minute (also the burst); 0 = off. */
  magicLinkPerMinute: number;
  /** Dashboard signups per address and hour (also the burst); 0 = off. */
  signupPerHour: number;
  /** Addresses that skip the per-address limits. */
  exempt: string[];
}

/** Route modules that need a caller: each registers its routes on the authenticated scope. */
export type AuthedRoutes = (app: FastifyInstance, deps: ApiDeps) => void;
