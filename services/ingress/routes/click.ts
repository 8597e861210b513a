// POST /api/v1/track/click (and the /api/tracking/click alias), spec 4.1.
// Order: extract `aff`, match the link (cache), reuse or mint the click id, produce the click to Kafka with
// acks=-1, answer. Enrichment and every database write happen in the click worker; a 200 is a durable click.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, ERROR_SCHEMA, noValidation, jsonBody } from '../../../shared/http/server.ts';
import { isPlainObject, truncate } from '../../../shared/json.ts';
import { formatClickId, parseClickId } from '../../../shared/domain/ids.ts';
import { CLICK_TEXT_FIELDS, TEXT_LIMITS } from '../../../shared/contracts/clicks.ts';
import type { ClickMessage } from '../../../shared/contracts/clicks.ts';
import type { IngressDeps } from '../deps.ts';
import { checkOrigin } from '../cors.ts';

const errorSchema = ERROR_SCHEMA;

export const clickBodySchema = {
  type: 'object',
  required: ['affiliate_url'],
  properties: {
    affiliate_url: { type: 'string', description: 'Full URL including the `aff` query parameter.' },
    page_url: { type: 'string' },
    page_title: { type: 'string' },
    referrer_url: { type: 'string' },
    session_id: { type: 'string' },
    user_agent: { type: 'string', description: 'Falls back to the User-Agent header.' },
    screen_resolution: { type: 'string', description: 'For example 1920x1080.' },
    viewport_size: { type: 'string' },
    language: { type: 'string' },
    timezone: { type: 'string', description: 'IANA timezone name.' },
    existing_click_id: {
      type: 'string',
      description:
        'Reuse this customer when it belongs to the same program and partner; otherwise a new click_id.',
    },
    additional_data: {
      type: 'object',
      properties: {
        test_mode: { type: 'boolean' },
        program_id: {
          type: 'integer',
          description: 'Program for a test-mode click whose link does not exist.',
        },
      },
    },
  },
} as const;

const clickResponses = {
  200: {
    description:
      'Click accepted (success true), an inactive link (success false, error "Referral link is inactive"), or a test-mode click.',
    type: 'object',
    properties: {
      success: { type: 'boolean' },
      click_id: { type: 'string', pattern: '^cust_[0-9]+_[0-9]+$' },
      partner_code: { type: 'string' },
      cookie_window_days: { type: 'integer' },
      error: { type: 'string' },
      message: { type: 'string' },
      data: {
        type: 'object',
        properties: {
          eventId: { type: 'string' },
          programId: { type: 'integer' },
          test_mode: { type: 'boolean' },
        },
      },
    },
    required: ['success'],
  },
  400: { ...errorSchema, description: 'Bad input; `error` is one of the strings of spec section 7.' },
  403: { ...errorSchema, description: "The browser's Origin is not on the program's allowed_origins." },
  429: { ...errorSchema, description: 'Per-IP rate limit (RATE_LIMIT_PER_MINUTE); see Retry-After.' },
  413: errorSchema,
  500: { ...errorSchema, description: '`Click tracking failed`: the click was not stored; retry it.' },
};

function optionalString(body: Record<string, unknown>, field: string, max: number): string | null {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new HttpError(400, `${field} must be a string`);
  // Cap the length rather than reject a long page title (NULs are already gone: installJsonHandling).
  return truncate(v, max);
}

const AFF_RE = /^[A-Za-z0-9_-]{1,64}$/;

export function extractAff(affiliateUrl: unknown): string {
  if (affiliateUrl === undefined || affiliateUrl === null || affiliateUrl === '') {
    throw new HttpError(400, 'affiliate_url is required');
  }
  if (typeof affiliateUrl !== 'string') throw new HttpError(400, 'Invalid affiliate_url');
  let url: URL;
  try {
    url = new URL(affiliateUrl.trim());
  } catch {
    throw new HttpError(400, 'Invalid affiliate_url');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new HttpError(400, 'Invalid affiliate_url');
  }
  const aff = url.searchParams.get('aff');
  if (aff === null || aff.trim() === '') throw new HttpError(400, 'No aff parameter found in affiliate_url');
  return aff.trim();
}

export function registerClickRoutes(app: FastifyInstance, deps: IngressDeps): void {
  const { cache, producer, snowflake } = deps;
  const clicksTopic = deps.topics.clicks;

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    deps.rateLimiter.check(req, reply);
    const body = jsonBody(req);
    const aff = extractAff(body.affiliate_url);

    const additional = body.additional_data;
    if (additional !== undefined && additional !== null && !isPlainObject(additional)) {
      throw new HttpError(400, 'additional_data must be an object');
    }
    const testMode = additional?.test_mode;
    if (testMode !== undefined && typeof testMode !== 'boolean') {
      throw new HttpError(400, 'additional_data.test_mode must be a boolean');
    }
    const programIdHint = additional?.program_id;
    if (
      programIdHint !== undefined &&
      programIdHint !== null &&
      !(Number.isSafeInteger(programIdHint) && (programIdHint as number) > 0)
    ) {
      throw new HttpError(400, 'additional_data.program_id must be a positive integer');
    }
    const existing = body.existing_click_id;
    if (existing !== undefined && existing !== null && typeof existing !== 'string') {
      throw new HttpError(400, 'existing_click_id must be a string');
    }
    const text: Record<string, string | null> = {};
    for (const f of CLICK_TEXT_FIELDS) text[f] = optionalString(body, f, TEXT_LIMITS[f]);
    if (text.user_agent === null) {
      const h = req.headers['user-agent'];
      text.user_agent = h ? truncate(h, TEXT_LIMITS.user_agent) : null;
    }

    const link = AFF_RE.test(aff) ? await cache.getLink(aff) : null;

    if (testMode === true) {
      // Test mode checks an integration: the link's program, or additional_data.program_id when the page
      // has no real partner link yet. Nothing but the is_test event is recorded.
      const programId = link?.programId ?? (programIdHint as number | undefined) ?? null;
      const program = programId === null ? null : await cache.getProgram(programId);
      if (!program || program.deleted) throw new HttpError(400, 'Referral link not found');
      checkOrigin(req, reply, program);
      const { id, ms } = snowflake.next();
      const msg: ClickMessage = {
        v: 1,
        type: 'click',
        event_id: id.toString(),
        ts: ms,
        program_id: program.id,
        link_id: link?.programId === program.id ? link.id : null,
        partner_id: link?.programId === program.id ? link.partnerId : null,
        partner_program_id: link?.programId === program.id ? link.partnerProgramId : null,
        click_id: null,
        is_test: true,
        ip: req.ip ?? null,
        ...(text as Pick<ClickMessage, (typeof CLICK_TEXT_FIELDS)[number]>),
      };
      await produce(req, msg, msg.event_id);
      return {
        success: true,
        message: 'Test click recorded',
        data: { eventId: msg.event_id, programId: program.id, test_mode: true },
      };
    }

    if (!link) throw new HttpError(400, 'Referral link not found');
    if (!link.valid) throw new HttpError(400, 'Invalid referral link configuration');
    const program = await cache.getProgram(link.programId!);
    if (!program || program.deleted) throw new HttpError(400, 'Invalid referral link configuration');
    checkOrigin(req, reply, program);
    if (link.status !== 'active') return { success: false, error: 'Referral link is inactive' };

    const { id, ms } = snowflake.next();
    // Reuse only a click id of the same partner-program (same program and partner); else last touch wins.
    const prior = parseClickId(existing);
    const clickId =
      prior && prior.partnerProgramId === String(link.partnerProgramId)
        ? (existing as string)
        : formatClickId(link.partnerProgramId!, id);
    const msg: ClickMessage = {
      v: 1,
      type: 'click',
      event_id: id.toString(),
      ts: ms,
      program_id: program.id,
      link_id: link.id,
      partner_id: link.partnerId,
      partner_program_id: link.partnerProgramId,
      click_id: clickId,
      is_test: false,
      ip: req.ip ?? null,
      ...(text as Pick<ClickMessage, (typeof CLICK_TEXT_FIELDS)[number]>),
    };
    await produce(req, msg, clickId);
    return {
      success: true,
      click_id: clickId,
      partner_code: link.shortLink,
      cookie_window_days: program.cookieWindowDays,
    };
  };

  async function produce(req: FastifyRequest, msg: ClickMessage, key: string): Promise<void> {
    try {
      await producer.send(clicksTopic, { key, value: JSON.stringify(msg) });
    } catch (err) {
      req.log.error({ err }, 'click not acknowledged by Kafka');
      throw new HttpError(500, 'Click tracking failed');
    }
  }

  const schema = {
    tags: ['tracking'],
    summary: 'Record a click on a referral link',
    description:
      'Public (no auth). Answers 200 only after Kafka acknowledged the click (acks=all): a 200 is never lost. ' +
      'Errors: 400 `affiliate_url is required`, `Invalid affiliate_url`, `No aff parameter found in affiliate_url`, ' +
      '`Referral link not found`, `Invalid referral link configuration`; 500 `Click tracking failed`.',
    body: clickBodySchema,
    response: clickResponses,
  };
  // Validation is done by hand above so the error strings are exactly the spec's; the schema documents.
  app.post('/api/v1/track/click', { schema, validatorCompiler: noValidation }, handler);
  app.post(
    '/api/tracking/click',
    {
      schema: { ...schema, summary: 'Compatibility alias of /api/v1/track/click', deprecated: true },
      validatorCompiler: noValidation,
    },
    handler,
  );
}
