// What the tracking routes look up on every request: referral links, programs, tracking-token hashes,
// partner-program → program, allowed origins, and the webhook intake's signing secrets; from memory, kept
// fresh by polling cache_invalidations.
import type { Sql } from '../../shared/db/sql.ts';
import type { Logger } from '../../shared/logger.ts';
import { outageWarning } from '../../shared/pipeline/dependencies.ts';
import { startPeriodic } from '../../shared/pipeline/periodic.ts';
import type { RunningTask } from '../../shared/pipeline/periodic.ts';
import { publicDiscount, storedDiscount } from '../../shared/domain/discount.ts';
import type { PublicDiscount } from '../../shared/domain/discount.ts';
import type { StoredSecrets } from '../../shared/processors/adapter.ts';

/** While Postgres is down the poll fails every CACHE_POLL_MS: one line every few seconds is enough. */
const pollWarning = outageWarning();

export interface CachedLink {
  id: number;
  shortLink: string;
  status: string;
  programId: number | null;
  partnerId: number | null;
  partnerProgramId: number | null;
  /**
   * Its partner-program's status: a link counts clicks only while its partner is `approved` (CONTRACT
   * "Review"); the partner_programs trigger logs status changes, which evict the partner-program's links.
   */
  partnerStatus: string | null;
  /** False when the link lacks a partner or program, or they disagree with its partner-program. */
  valid: boolean;
  /**
   * The discount of its partner's group, without processor ids (docs/rewards.md): a move of the partner or
   * a change of a group logs an invalidation (0026_rewards.sql), which evicts the link.
   */
  discount: PublicDiscount | null;
}

export interface CachedProgram {
  id: number;
  name: string;
  slug: string;
  status: string;
  deleted: boolean;
  cookieWindowDays: number;
  allowedOrigins: string[];
  apiTokenMasked: string | null;
}

/** A program's webhook signing secrets, as stored (the adapters say which verify their events). */
export type CachedWebhookSecrets = StoredSecrets;

/** Unknown tokens are remembered this long, so a probe with garbage tokens costs one query per token. */
const NEGATIVE_TOKEN_TTL_MS = 2000;

interface Entry<T> {
  value: T | null;
  at: number;
}

export interface TrackingCacheOptions {
  pollMs: number;
  ttlMs: number;
  maxEntries?: number;
}

export class TrackingCache {
  private readonly links = new Map<string, Entry<CachedLink>>();
  private readonly programs = new Map<number, Entry<CachedProgram>>();
  /** Partner-program id → its program id (for browser-mode leads that carry only a click id). */
  private readonly ppPrograms = new Map<number, Entry<number>>();
  /** Tracking-token SHA-256 (hex) → program id (null: no live program has it). */
  private readonly tokens = new Map<string, Entry<number>>();
  /** Program id → its workspace's webhook signing secrets (null: no live program with that id). */
  private readonly secrets = new Map<number, Entry<CachedWebhookSecrets>>();
  private readonly loading = new Map<string, Promise<unknown>>();
  private lastSeq = 0n;
  /** Rows seen in the recent window, so a late-committing invalidation is applied once. */
  private readonly recentSeqs = new Map<string, number>();
  private polling: RunningTask | null = null;
  /** Bumped by every eviction: a load that started before one must not store what it read. */
  private generation = 0;
  private readonly sql: Sql;
  private readonly log: Logger;
  private readonly opts: Required<TrackingCacheOptions>;
  readonly stats = { hits: 0, misses: 0, evictions: 0 };
  /** Every origin any live program allows (for preflights), reloaded after a program change. */
  private origins: { set: Set<string>; at: number } | null = null;

  constructor(sql: Sql, log: Logger, opts: TrackingCacheOptions) {
    this.sql = sql;
    this.log = log;
    this.opts = { maxEntries: 100_000, ...opts };
  }

  async start(): Promise<void> {
    const [row] = await this.sql<
      { seq: string }[]
    >`select coalesce(max(seq), 0)::text as seq from cache_invalidations`;
    this.lastSeq = BigInt(row!.seq);
    this.polling = startPeriodic(
      {
        name: 'cache invalidation poll',
        intervalMs: this.opts.pollMs,
        delayFirst: true,
        run: async () => {
          try {
            await this.poll();
          } catch (err) {
            // While Postgres is unreachable nothing can change a link either: keep serving what we have.
            pollWarning(this.log, err, 'cache invalidation poll failed');
          }
          return false;
        },
      },
      this.log,
    );
  }

  /** Resolves once the poll in hand (if any) has ended. */
  async stop(): Promise<void> {
    await this.polling?.stop();
    this.polling = null;
  }

  /** Applies new invalidations. Sequence values can commit out of order, so the last 10 s are re-read. */
  async poll(): Promise<void> {
    const rows = await this.sql<{ seq: string; kind: string; key: string }[]>`
      select seq::text, kind, key from cache_invalidations
      where seq > ${this.lastSeq.toString()} or created_at > now() - interval '10 seconds'
      order by seq`;
    const now = Date.now();
    for (const r of rows) {
      if (this.recentSeqs.has(r.seq)) continue;
      this.recentSeqs.set(r.seq, now);
      const seq = BigInt(r.seq);
      if (seq > this.lastSeq) this.lastSeq = seq;
      this.evict(r.kind, r.key);
    }
    for (const [seq, at] of this.recentSeqs) if (now - at > 20_000) this.recentSeqs.delete(seq);
  }

  private evict(kind: string, key: string): void {
    this.stats.evictions++;
    this.generation++;
    if (kind === 'link') {
      this.links.delete(key);
    } else if (kind === 'program') {
      this.origins = null;
      this.programs.delete(Number(key));
      const id = Number(key);
      this.secrets.delete(id);
      // A regenerated or deleted token dies here; a new program's token may have been cached as unknown.
      for (const [k, e] of this.tokens) if (e.value === id || e.value === null) this.tokens.delete(k);
      for (const [k, e] of this.links) if (e.value?.programId === id) this.links.delete(k);
    } else if (kind === 'partner_program') {
      const id = Number(key);
      this.ppPrograms.delete(id);
      for (const [k, e] of this.links) if (e.value?.partnerProgramId === id) this.links.delete(k);
    } else if (kind === 'processor_connection') {
      const workspaceId = Number(key);
      for (const [k, e] of this.secrets) if (e.value?.workspaceId === workspaceId) this.secrets.delete(k);
    } else {
      this.links.clear();
      this.programs.clear();
      this.tokens.clear();
      this.secrets.clear();
    }
  }

  /**
   * The cached value while younger than maxAgeMs, else one load per key however many callers wait for it;
   * the loaded value is stored unless an eviction happened meanwhile.
   */
  private lookup<K, T>(
    map: Map<K, Entry<T>>,
    key: K,
    loadKey: string,
    load: () => Promise<T | null>,
    maxAgeMs: (value: T | null) => number = () => this.opts.ttlMs,
  ): Promise<T | null> {
    const e = map.get(key);
    if (e && Date.now() - e.at < maxAgeMs(e.value)) {
      this.stats.hits++;
      return Promise.resolve(e.value);
    }
    this.stats.misses++;
    let p = this.loading.get(loadKey) as Promise<T | null> | undefined;
    if (!p) {
      const gen = this.generation;
      p = load()
        .then((value) => {
          this.put(map, key, value, gen);
          return value;
        })
        .finally(() => this.loading.delete(loadKey));
      this.loading.set(loadKey, p);
    }
    return p;
  }

  private put<K, T>(map: Map<K, Entry<T>>, key: K, value: T | null, loadedAt: number): void {
    if (loadedAt !== this.generation) return;
    if (map.size >= this.opts.maxEntries) {
      // Maps iterate in insertion order: drop the oldest tenth.
      let n = Math.ceil(this.opts.maxEntries / 10);
      for (const k of map.keys()) {
        if (n-- <= 0) break;
        map.delete(k);
      }
    }
    map.set(key, { value, at: Date.now() });
  }

  getLink(shortLink: string): Promise<CachedLink | null> {
    return this.lookup(this.links, shortLink, `l:${shortLink}`, async () => {
      const rows = await this.sql<
        {
          id: string;
          short_link: string;
          status: string;
          program_id: string | null;
          partner_id: string | null;
          partner_program_id: string | null;
          pp_partner_id: string | null;
          pp_program_id: string | null;
          pp_status: string | null;
          discount: unknown;
        }[]
      >`
        select l.id, l.short_link, l.status, l.program_id, l.partner_id, l.partner_program_id,
               pp.partner_id as pp_partner_id, pp.program_id as pp_program_id, pp.status as pp_status,
               g.discount
        from referral_links l left join partner_programs pp on pp.id = l.partner_program_id
        left join program_groups g on g.id = pp.group_id
        where l.short_link = ${shortLink}`;
      const r = rows[0];
      const link: CachedLink | null = r
        ? {
            id: Number(r.id),
            shortLink: r.short_link,
            status: r.status,
            programId: r.program_id === null ? null : Number(r.program_id),
            partnerId: r.partner_id === null ? null : Number(r.partner_id),
            partnerProgramId: r.partner_program_id === null ? null : Number(r.partner_program_id),
            partnerStatus: r.pp_status,
            valid:
              r.program_id !== null &&
              r.partner_id !== null &&
              r.partner_program_id !== null &&
              r.pp_partner_id === r.partner_id &&
              r.pp_program_id === r.program_id,
            discount: publicDiscount(storedDiscount(r.discount)),
          }
        : null;
      return link;
    });
  }

  async originAllowedAnywhere(origin: string): Promise<boolean> {
    if (!this.origins || Date.now() - this.origins.at > this.opts.ttlMs) {
      const gen = this.generation;
      const rows = await this.sql<{ o: string }[]>`
        select distinct lower(rtrim(unnest(allowed_origins), '/')) as o from programs where deleted_at is null`;
      const set = new Set(rows.map((r) => r.o));
      if (gen === this.generation) this.origins = { set, at: Date.now() };
      return set.has(origin);
    }
    return this.origins.set.has(origin);
  }

  programIdForPartnerProgram(ppId: number): Promise<number | null> {
    return this.lookup(this.ppPrograms, ppId, `pp:${ppId}`, async () => {
      const [r] = await this.sql<
        { program_id: string }[]
      >`select program_id from partner_programs where id = ${ppId}`;
      return r ? Number(r.program_id) : null;
    });
  }

  /** The live (not deleted) program whose tracking token has this SHA-256, or null. */
  programIdForToken(hash: Buffer): Promise<number | null> {
    const key = hash.toString('hex');
    return this.lookup(
      this.tokens,
      key,
      `t:${key}`,
      async () => {
        const [r] = await this.sql<{ id: string }[]>`
          select id from programs where api_token_hash = ${hash} and deleted_at is null`;
        return r ? Number(r.id) : null;
      },
      (id) => (id === null ? NEGATIVE_TOKEN_TTL_MS : this.opts.ttlMs),
    );
  }

  getProgram(id: number): Promise<CachedProgram | null> {
    return this.lookup(this.programs, id, `p:${id}`, async () => {
      const rows = await this.sql<
        {
          id: string;
          name: string;
          slug: string;
          status: string;
          deleted: boolean;
          cookie_window_days: number;
          allowed_origins: string[];
          api_token_masked: string | null;
        }[]
      >`select id, name, slug, status, deleted_at is not null as deleted, cookie_window_days, allowed_origins,
               api_token_masked
        from programs where id = ${id}`;
      const r = rows[0];
      const program: CachedProgram | null = r
        ? {
            id: Number(r.id),
            name: r.name,
            slug: r.slug,
            status: r.status,
            deleted: r.deleted,
            cookieWindowDays: r.cookie_window_days,
            allowedOrigins: r.allowed_origins,
            apiTokenMasked: r.api_token_masked,
          }
        : null;
      return program;
    });
  }

  /**
   * The webhook signing secrets of a live program's workspace, or null for an unknown or deleted program.
   * `fresh` reads Postgres whatever is cached (the intake's second try after a signature that did not match
   * what it had: a connection made or a secret rolled since the last poll verifies at once).
   */
  webhookSecrets(programId: number, fresh = false): Promise<CachedWebhookSecrets | null> {
    if (fresh) this.secrets.delete(programId);
    return this.lookup(
      this.secrets,
      programId,
      `s:${programId}`,
      async () => {
        const [r] = await this.sql<
          {
            workspace_id: string;
            webhook_secret: string | null;
            previous_webhook_secret: string | null;
            previous_secret_expires_at: Date | null;
            others: Record<string, string>;
          }[]
        >`
          select p.workspace_id, c.webhook_secret, c.previous_webhook_secret, c.previous_secret_expires_at,
                 (select coalesce(jsonb_object_agg(s.processor, s.webhook_secret), '{}'::jsonb)
                  from processor_secrets s where s.workspace_id = p.workspace_id) as others
          from programs p left join processor_connections c on c.workspace_id = p.workspace_id
          where p.id = ${programId} and p.deleted_at is null`;
        return r
          ? {
              workspaceId: Number(r.workspace_id),
              secret: r.webhook_secret,
              previousSecret: r.previous_webhook_secret,
              previousExpiresAt: r.previous_secret_expires_at?.getTime() ?? null,
              others: r.others,
            }
          : null;
      },
      (v) => (v === null ? NEGATIVE_TOKEN_TTL_MS : this.opts.ttlMs),
    );
  }
}
