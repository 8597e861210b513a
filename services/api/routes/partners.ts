// Partners, referral links and commissions of a program (CONTRACT "Partners, links, commissions,
// balances"). Reads need program:read on the program; writes need program:update.
//
// - A partner belongs to a workspace and is found by email (stored lowercased) within it, so one person
//   promoting several programs of the advertiser is one partner with one overall balance, and one
//   partner-program (with its own balance) per program.
// - short_link is globally unique: the `aff` value alone finds the link at the ingress. Writing the row is
//   enough for the ingress to see it: triggers on referral_links and partner_programs feed its cache.
// - Mark paid: the commission's status change and its `commission_paid` ledger entry (amount -amount_cents,
//   never clamped) commit in ONE transaction, through the ledger step's own code (see markPaid).
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Sql } from '../../../shared/db/sql.ts';
import type { LedgerEffect } from '../../../shared/contracts/commands.ts';
import { HttpError, EMAIL_RE, jsonBody, noValidation, errorResponses } from '../../../shared/http/server.ts';
import { applyLedgerEntries } from '../../../shared/db/ledger.ts';
import { programAccess, principalOf } from '../access.ts';
import type { ApiDeps } from '../deps.ts';
import { iso, managementSecurity, pathId } from '../common.ts';

const SHORT_LINK_RE = /^[A-Za-z0-9_-]{1,64}$/;
export const COMMISSION_STATUSES = ['pending', 'approved', 'paid', 'reversed', 'refunded'] as const;
type CommissionStatus = (typeof COMMISSION_STATUSES)[number];
const PAYABLE: CommissionStatus[] = ['pending', 'approved'];

const programParams = { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } as const;
const partnerParams = {
  type: 'object',
  properties: { id: { type: 'integer' }, partnerId: { type: 'integer' } },
  required: ['id', 'partnerId'],
} as const;
const linkParams = {
  type: 'object',
  properties: { id: { type: 'integer' }, partnerId: { type: 'integer' }, linkId: { type: 'integer' } },
  required: ['id', 'partnerId', 'linkId'],
} as const;

const linkSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    short_link: { type: 'string' },
    status: { type: 'string', enum: ['active', 'inactive'] },
    clicks: { type: 'integer' },
    last_clicked: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;
const commissionSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    status: { type: 'string', enum: [...COMMISSION_STATUSES] },
    amount_cents: { type: 'integer' },
    currency: { type: 'string' },
    sale_id: { type: 'integer' },
    partner_id: { type: 'integer' },
    refund_reason: { type: ['string', 'null'] },
    paid_at: { type: ['string', 'null'], format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

interface LinkRow {
  id: string;
  short_link: string;
  status: 'active' | 'inactive';
  clicks: string;
  last_clicked: Date | null;
}
const toLink = (r: LinkRow) => ({
  id: Number(r.id),
  short_link: r.short_link,
  status: r.status,
  clicks: Number(r.clicks),
  last_clicked: iso(r.last_clicked),
});

interface CommissionRow {
  id: string;
  status: CommissionStatus;
  amount_cents: string;
  currency: string;
  sale_id: string;
  partner_id: string;
  refund_reason: string | null;
  paid_at: Date | null;
  created_at: Date;
}
const toCommission = (r: CommissionRow) => ({
  id: Number(r.id),
  status: r.status,
  amount_cents: Number(r.amount_cents),
  currency: r.currency,
  sale_id: Number(r.sale_id),
  partner_id: Number(r.partner_id),
  refund_reason: r.refund_reason,
  paid_at: iso(r.paid_at),
  created_at: iso(r.created_at)!,
});

/** 8 URL-safe characters (48 random bits). */
const generateShortLink = () => randomBytes(6).toString('base64url');

export function registerPartnerRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { sql } = deps;
  const base = '/api/advertiser/affiliate-programs/:id';

  /** The partner-program of partner `partnerId` in program `programId`, or 404. */
  async function partnerProgramId(programId: number, partnerId: number): Promise<number> {
    if (!Number.isSafeInteger(partnerId)) throw new HttpError(404, 'Partner not found in this program');
    const [pp] = await sql<{ id: string }[]>`
      select id from partner_programs where program_id = ${programId} and partner_id = ${partnerId}`;
    if (!pp) throw new HttpError(404, 'Partner not found in this program');
    return Number(pp.id);
  }

  app.post<{ Params: { id: string } }>(
    `${base}/partners`,
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: 'Add a partner to the program',
        description:
          'Scope program:update. A partner of the same workspace with this email (case-insensitive) is reused; ' +
          'its name is kept. Errors: 400 `name is required and must be 1 to 200 characters`, `email must be a ' +
          "valid email address`, `status must be 'approved' or 'pending'`; 404 `Program not found`; 409 " +
          '`Partner is already in this program`.',
        security: managementSecurity,
        params: programParams,
        body: {
          type: 'object',
          required: ['name', 'email'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 200 },
            email: { type: 'string', format: 'email' },
            status: { type: 'string', enum: ['approved', 'pending'], default: 'approved' },
          },
        },
        response: {
          201: {
            type: 'object',
            properties: {
              data: {
                type: 'object',
                properties: {
                  partner: {
                    type: 'object',
                    properties: {
                      id: { type: 'integer' },
                      name: { type: 'string' },
                      email: { type: 'string' },
                    },
                  },
                  partner_program: {
                    type: 'object',
                    properties: {
                      id: { type: 'integer' },
                      status: { type: 'string', enum: ['approved', 'pending'] },
                      created_at: { type: 'string', format: 'date-time' },
                    },
                  },
                },
              },
            },
          },
          ...errorResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (req, reply) => {
      const programId = pathId(req.params.id);
      const access = await programAccess(sql, principalOf(req), programId, 'program:update');
      const b = jsonBody(req);
      const name = typeof b.name === 'string' ? b.name.trim() : '';
      if (name.length < 1 || name.length > 200)
        throw new HttpError(400, 'name is required and must be 1 to 200 characters');
      const email = typeof b.email === 'string' ? b.email.trim().toLowerCase() : '';
      if (!EMAIL_RE.test(email) || email.length > 320)
        throw new HttpError(400, 'email must be a valid email address');
      const status = b.status ?? 'approved';
      if (status !== 'approved' && status !== 'pending')
        throw new HttpError(400, "status must be 'approved' or 'pending'");

      const result = await sql.begin(async (tx) => {
        // One partner per (workspace, email) even when two requests race: there is no unique index for it.
        await tx`select pg_advisory_xact_lock(hashtextextended(${`partner:${access.workspaceId}:${email}`}, 0))`;
        let [partner] = await tx<{ id: string; name: string; email: string }[]>`
          select id, name, email from partners
          where workspace_id = ${access.workspaceId} and email = ${email} order by id limit 1`;
        partner ??= (
          await tx<{ id: string; name: string; email: string }[]>`
            insert into partners (workspace_id, name, email) values (${access.workspaceId}, ${name}, ${email})
            returning id, name, email`
        )[0]!;
        const [pp] = await tx<{ id: string; status: 'approved' | 'pending'; created_at: Date }[]>`
          insert into partner_programs (partner_id, program_id, status)
          values (${partner.id}, ${programId}, ${status})
          on conflict (partner_id, program_id) do nothing
          returning id, status, created_at`;
        return pp ? { partner, pp } : null;
      });
      if (!result) throw new HttpError(409, 'Partner is already in this program');
      return reply.code(201).send({
        data: {
          partner: { id: Number(result.partner.id), name: result.partner.name, email: result.partner.email },
          partner_program: {
            id: Number(result.pp.id),
            status: result.pp.status,
            created_at: iso(result.pp.created_at),
          },
        },
      });
    },
  );

  app.get<{ Params: { id: string } }>(
    `${base}/partners`,
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: "The program's partners with their balances",
        description:
          'Scope program:read. `id` is the partner id; `balance_cents` is the partner balance over all ' +
          "programs, `program_balance_cents` the partner-program balance; `joined_at` is the partner-program's " +
          'creation time. Each balance is the sum of its ledger entries (it may be negative after a refund of a ' +
          'paid commission).',
        security: managementSecurity,
        params: programParams,
        response: {
          200: {
            type: 'object',
            properties: {
              data: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    id: { type: 'integer' },
                    name: { type: 'string' },
                    email: { type: 'string' },
                    partner_program_id: { type: 'integer' },
                    status: { type: 'string', enum: ['approved', 'pending'] },
                    clicks: { type: 'integer' },
                    balance_cents: { type: 'integer' },
                    program_balance_cents: { type: 'integer' },
                    joined_at: { type: 'string', format: 'date-time' },
                  },
                },
              },
            },
          },
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (req) => {
      const programId = pathId(req.params.id);
      await programAccess(sql, principalOf(req), programId, 'program:read');
      const rows = await sql<
        {
          id: string;
          name: string;
          email: string;
          pp_id: string;
          status: 'approved' | 'pending';
          clicks: string;
          balance_cents: string;
          program_balance_cents: string;
          joined_at: Date;
        }[]
      >`
        select p.id, p.name, p.email, pp.id as pp_id, pp.status, pp.clicks, p.balance_cents,
               pp.balance_cents as program_balance_cents, pp.created_at as joined_at
        from partner_programs pp join partners p on p.id = pp.partner_id
        where pp.program_id = ${programId}
        order by pp.id`;
      return {
        data: rows.map((r) => ({
          id: Number(r.id),
          name: r.name,
          email: r.email,
          partner_program_id: Number(r.pp_id),
          status: r.status,
          clicks: Number(r.clicks),
          balance_cents: Number(r.balance_cents),
          program_balance_cents: Number(r.program_balance_cents),
          joined_at: iso(r.joined_at),
        })),
      };
    },
  );

  app.post<{ Params: { id: string; partnerId: string } }>(
    `${base}/partners/:partnerId/links`,
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: 'Create a referral link for a partner of the program',
        description:
          'Scope program:update. `short_link` is the `aff` value, globally unique; 8 random URL-safe ' +
          'characters when omitted. Errors: 400 `short_link must be 1 to 64 characters: letters, digits, _ or ' +
          '-`; 404 `Partner not found in this program`; 409 `short_link is already taken`.',
        security: managementSecurity,
        params: partnerParams,
        body: {
          type: 'object',
          properties: { short_link: { type: 'string', pattern: SHORT_LINK_RE.source } },
        },
        response: {
          201: { type: 'object', properties: { data: linkSchema } },
          ...errorResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (req, reply) => {
      const programId = pathId(req.params.id);
      await programAccess(sql, principalOf(req), programId, 'program:update');
      const b = jsonBody(req);
      let wanted: string | null = null;
      if (b.short_link !== undefined && b.short_link !== null) {
        if (typeof b.short_link !== 'string' || !SHORT_LINK_RE.test(b.short_link)) {
          throw new HttpError(400, 'short_link must be 1 to 64 characters: letters, digits, _ or -');
        }
        wanted = b.short_link;
      }
      const partnerId = pathId(req.params.partnerId);
      const ppId = await partnerProgramId(programId, partnerId);
      for (let attempt = 0; attempt < 5; attempt++) {
        const [row] = await sql<LinkRow[]>`
          insert into referral_links (short_link, program_id, partner_id, partner_program_id)
          values (${wanted ?? generateShortLink()}, ${programId}, ${partnerId}, ${ppId})
          on conflict (short_link) do nothing
          returning id, short_link, status, clicks, last_clicked`;
        if (row) return reply.code(201).send({ data: toLink(row) });
        if (wanted !== null) break;
      }
      throw new HttpError(409, 'short_link is already taken');
    },
  );

  app.get<{ Params: { id: string; partnerId: string } }>(
    `${base}/partners/:partnerId/links`,
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: "A partner's referral links in the program",
        description: 'Scope program:read. 404 `Partner not found in this program`.',
        security: managementSecurity,
        params: partnerParams,
        response: {
          200: { type: 'object', properties: { data: { type: 'array', items: linkSchema } } },
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (req) => {
      const programId = pathId(req.params.id);
      await programAccess(sql, principalOf(req), programId, 'program:read');
      const partnerId = pathId(req.params.partnerId);
      await partnerProgramId(programId, partnerId);
      const rows = await sql<LinkRow[]>`
        select id, short_link, status, clicks, last_clicked from referral_links
        where program_id = ${programId} and partner_id = ${partnerId}
        order by id`;
      return { data: rows.map(toLink) };
    },
  );

  app.put<{ Params: { id: string; partnerId: string; linkId: string } }>(
    `${base}/partners/:partnerId/links/:linkId`,
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: 'Activate or deactivate a referral link',
        description:
          'Scope program:update. The ingress sees the change within its cache poll interval; an inactive link ' +
          "answers clicks with 200 `{ success: false, error: 'Referral link is inactive' }`. Errors: 400 " +
          "`status must be 'active' or 'inactive'`; 404 `Referral link not found`.",
        security: managementSecurity,
        params: linkParams,
        body: {
          type: 'object',
          required: ['status'],
          properties: { status: { type: 'string', enum: ['active', 'inactive'] } },
        },
        response: {
          200: { type: 'object', properties: { data: linkSchema } },
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (req) => {
      const programId = pathId(req.params.id);
      await programAccess(sql, principalOf(req), programId, 'program:update');
      const b = jsonBody(req);
      if (b.status !== 'active' && b.status !== 'inactive')
        throw new HttpError(400, "status must be 'active' or 'inactive'");
      const partnerId = pathId(req.params.partnerId);
      const linkId = pathId(req.params.linkId);
      if (!Number.isSafeInteger(partnerId) || !Number.isSafeInteger(linkId))
        throw new HttpError(404, 'Referral link not found');
      // Only a real change is written: the trigger logs a cache invalidation for every update of status.
      const [row] = await sql<LinkRow[]>`
        with cur as (
          select id, status from referral_links
          where id = ${linkId} and program_id = ${programId} and partner_id = ${partnerId}
        ), upd as (
          update referral_links l set status = ${b.status}, updated_at = now()
          from cur where l.id = cur.id and cur.status <> ${b.status}
          returning l.id, l.short_link, l.status, l.clicks, l.last_clicked
        )
        select * from upd
        union all
        select l.id, l.short_link, l.status, l.clicks, l.last_clicked
        from referral_links l join cur on cur.id = l.id
        where not exists (select 1 from upd)`;
      if (!row) throw new HttpError(404, 'Referral link not found');
      return { data: toLink(row) };
    },
  );

  app.get<{ Params: { id: string }; Querystring: Record<string, unknown> }>(
    `${base}/commissions`,
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: "The program's commissions, newest first",
        description:
          'Scope program:read. `status` filters (pending, approved, paid, reversed, refunded); `limit` ' +
          '1..1000 (default 100) and `offset` (default 0) page through them. Errors: 400 `status must be one ' +
          'of pending, approved, paid, reversed, refunded`, `limit must be an integer from 1 to 1000`, ' +
          '`offset must be a non-negative integer`.',
        security: managementSecurity,
        params: programParams,
        querystring: {
          type: 'object',
          properties: {
            status: { type: 'string', enum: [...COMMISSION_STATUSES] },
            limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
            offset: { type: 'integer', minimum: 0, default: 0 },
          },
        },
        response: {
          200: { type: 'object', properties: { data: { type: 'array', items: commissionSchema } } },
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (req) => {
      const programId = pathId(req.params.id);
      await programAccess(sql, principalOf(req), programId, 'program:read');
      const q = req.query ?? {};
      const status = q.status;
      if (status !== undefined && !COMMISSION_STATUSES.includes(status as CommissionStatus)) {
        throw new HttpError(400, `status must be one of ${COMMISSION_STATUSES.join(', ')}`);
      }
      const intParam = (v: unknown, dflt: number, min: number, max: number, msg: string): number => {
        if (v === undefined) return dflt;
        const n = typeof v === 'string' && /^[0-9]{1,9}$/.test(v) ? Number(v) : Number.NaN;
        if (!(n >= min && n <= max)) throw new HttpError(400, msg);
        return n;
      };
      const limit = intParam(q.limit, 100, 1, 1000, 'limit must be an integer from 1 to 1000');
      const offset = intParam(q.offset, 0, 0, 1e9, 'offset must be a non-negative integer');
      const rows = await sql<CommissionRow[]>`
        select id, status, amount_cents, currency, sale_id, partner_id, refund_reason, paid_at, created_at
        from commissions
        where program_id = ${programId} ${status === undefined ? sql`` : sql`and status = ${status as string}`}
        order by created_at desc, id desc
        limit ${limit} offset ${offset}`;
      return { data: rows.map(toCommission) };
    },
  );

  app.post<{ Params: { id: string } }>(
    '/api/advertiser/commissions/:id/mark-paid',
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: 'Mark a commission paid: status paid, and its amount deducted from the balances',
        description:
          "Scope program:update on the commission's program. Allowed from pending or approved. In one " +
          'transaction: status `paid`, paid_at, and the ledger entry `commission:<id>:paid` (kind ' +
          'commission_paid, -amount_cents, never clamped) applied to the partner and partner-program ' +
          'balances. A later refund of a paid commission is deducted in full and may leave a balance ' +
          'negative. Errors: 404 `Commission not found`; 409 `Commission is already paid`, `A reversed ' +
          'commission cannot be marked paid`, `A refunded commission cannot be marked paid`.',
        security: managementSecurity,
        params: programParams,
        response: {
          200: { type: 'object', properties: { data: commissionSchema } },
          ...errorResponses(401, 403, 404, 409),
        },
      },
    },
    async (req) => {
      const commissionId = pathId(req.params.id);
      if (!Number.isSafeInteger(commissionId)) throw new HttpError(404, 'Commission not found');
      const [found] = await sql<{ program_id: string }[]>`
        select program_id from commissions where id = ${commissionId}`;
      if (!found) throw new HttpError(404, 'Commission not found');
      try {
        await programAccess(sql, principalOf(req), Number(found.program_id), 'program:update');
      } catch (err) {
        // Do not reveal that a commission of another workspace exists.
        if (err instanceof HttpError && err.statusCode === 404)
          throw new HttpError(404, 'Commission not found');
        throw err;
      }
      return { data: await markPaid(sql, commissionId) };
    },
  );
}

/**
 * Status → paid and the ledger entry, in one transaction. The commission row is locked first (the
 * reversal worker locks it too, so a concurrent refund sees either the unpaid commission, and this then
 * answers 409, or the paid one, and deducts without clamping); the ledger step then locks the partner and
 * the partner-program in the order every balance writer uses. The entry_key is unique, so even a replay of
 * the entry could not apply twice; and the status check makes a second mark-paid a 409.
 */
async function markPaid(sql: Sql, commissionId: number) {
  return sql.begin(async (tx) => {
    const [c] = await tx<
      { status: CommissionStatus; amount_cents: string; partner_id: string; partner_program_id: string }[]
    >`select status, amount_cents, partner_id, partner_program_id from commissions
      where id = ${commissionId} for no key update`;
    if (!c) throw new HttpError(404, 'Commission not found');
    if (!PAYABLE.includes(c.status)) {
      throw new HttpError(
        409,
        c.status === 'paid' ? 'Commission is already paid' : `A ${c.status} commission cannot be marked paid`,
      );
    }
    const [row] = await tx<CommissionRow[]>`
      update commissions set status = 'paid', paid_at = now(), updated_at = now()
      where id = ${commissionId}
      returning id, status, amount_cents, currency, sale_id, partner_id, refund_reason, paid_at, created_at`;
    const entry: LedgerEffect = {
      topic: 'ledger',
      entry_key: `commission:${commissionId}:paid`,
      kind: 'commission_paid',
      partner_id: Number(c.partner_id),
      partner_program_id: Number(c.partner_program_id),
      commission_id: commissionId,
      amount_cents: -Number(c.amount_cents),
      clamp_at_zero: false,
    };
    // The ledger's locks (partners, then partner_programs, in id order), entry_key check and balance writes
    // commit or roll back with the status change.
    await applyLedgerEntries(tx, [entry]);
    return toCommission(row!);
  });
}
