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
   * Partner sign-in, magic-link and application rate limits (per minute; 0 = off) and the IPs exempt from
   * the per-IP buckets (docs/partners.md "Rate limits"); omitted: the defaults of shared/config.ts.
   */
  partnerLimits?: {
    authPerMinute: number;
    authIpPerMinute: number;
    applyPerMinute: number;
    exempt: string[];
  };
}

/** Route modules that need a caller: each registers its routes on the authenticated scope. */
export type AuthedRoutes = (app: FastifyInstance, deps: ApiDeps) => void;
