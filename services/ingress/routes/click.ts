// POST /api/v1/track/click (and its /api/tracking alias), spec 4.1: match the link, reuse or mint the
// click id, produce the click to Kafka with acks=-1, answer. A 200 is a durable click.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, ERROR_SCHEMA } from '../../../shared/http/server.ts';
import type { ClickMessage } from '../../../shared/contracts/clicks.ts';
import { RECORD_TYPE_HEADER } from '../../../shared/contracts/topics.ts';
import type { IngressDeps } from '../deps.ts';
import { PublicDiscountOut } from '../../../shared/domain/discount.ts';
import { checkOrigin } from '../cors.ts';
import { rateLimited, registerTrackRoute } from '../track-route.ts';
import { RETRY_AFTER_SECONDS } from '../commands/answer.ts';
import { outageWarning } from '../../../shared/pipeline/dependencies.ts';
import { cachedBotCheck, clickQuality, isPrefetch } from '../../../shared/tracking/quality.ts';
import {
  AFF_RE,
  ClickBody,
  buildClickMessage,
  clickIdFor,
  clickInput,
  eventClickNumber,
} from '../click-message.ts';

const errorSchema = ERROR_SCHEMA;
/** One line every few seconds while Kafka is down, not one per refused click. */
const unacked = outageWarning();
/** What the click worker tells clicks from leads by (the clicks topic carries both). */
const CLICK_HEADERS = { [RECORD_TYPE_HEADER]: Buffer.from('click') };
/** Spec 7's click failure string, answered with 503 + Retry-After when Kafka does not acknowledge. */
export const CLICK_FAILED = 'Click tracking failed';

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
      discount: {
        ...PublicDiscountOut,
        description:
          "The discount of the clicked partner's group, for the checkout to apply (absent: none; docs/rewards.md)",
      },
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
  503: {
    ...errorSchema,
    description:
      '`Click tracking failed`: Kafka did not acknowledge within PRODUCE_TIMEOUT_MS (or is known to be down); ' +
      'retry after Retry-After seconds. The click may still have been recorded: send an `event_id` to retry safely.',
  },
};

export function registerClickRoutes(app: FastifyInstance, deps: IngressDeps): void {
  const { cache, producer, snowflake } = deps;
  const clicksTopic = deps.topics.clicks;
  const isBot = cachedBotCheck();
  /** The click's quality; the body's user_agent is the visitor's, the header's may be the caller's. */
  const quality = (req: FastifyRequest, ua: string | null) => {
    const fromBody = typeof (req.body as ClickBody).user_agent === 'string';
    return clickQuality(
      {
        bodyUserAgent: fromBody ? ua : null,
        headerUserAgent: fromBody ? null : ua,
        prefetch: isPrefetch(req.headers),
      },
      isBot,
    );
  };

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const { aff, ad, eventId, existingClickId, text } = clickInput(
      req.body as ClickBody,
      req.headers['user-agent'],
    );
    const link = AFF_RE.test(aff) ? await cache.getLink(aff) : null;

    if (ad.testMode) {
      // Test mode checks an integration: the link's program, or additional_data.program_id when the page
      // has no real partner link yet. Nothing but the is_test event is recorded.
      const programId = link?.programId ?? ad.programId;
      const program = programId === null ? null : await cache.getProgram(programId);
      if (!program || program.deleted) throw new HttpError(400, 'Referral link not found');
      checkOrigin(req, reply, program);
      const { id, ms } = snowflake.next();
      const msg = buildClickMessage({
        id,
        ms,
        programId: program.id,
        link: link?.programId === program.id ? link : null,
        clickId: null,
        clientEventId: eventId,
        ip: req.ip ?? null,
        text,
      });
      await produce(req, reply, msg, msg.event_id);
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
    // A link of a partner who is not (or no longer) approved answers like an inactive one (CONTRACT "Review").
    if (link.status !== 'active' || link.partnerStatus !== 'approved') {
      return { success: false, error: 'Referral link is inactive' };
    }

    const { id, ms } = snowflake.next();
    // With an event_id the click id comes from (program, event_id): a retry gets the same one, from any
    // ingress process, and the click worker stores one click per (program, event_id).
    const number = eventId === null ? id : eventClickNumber(program.id, eventId);
    const clickId = clickIdFor(existingClickId, link.partnerProgramId!, number);
    const msg = buildClickMessage({
      id,
      ms,
      programId: program.id,
      link,
      clickId,
      clientEventId: eventId,
      // Answered as any click; the worker stores a bot's or a prefetch with its quality and counts it nowhere.
      quality: deps.classifyClicks === false ? 'human' : quality(req, text.user_agent),
      ip: req.ip ?? null,
      text,
    });
    await produce(req, reply, msg, clickId);
    return {
      success: true,
      click_id: clickId,
      partner_code: link.shortLink,
      cookie_window_days: program.cookieWindowDays,
      ...(link.discount ? { discount: link.discount } : {}),
    };
  };

  /** Kafka unreachable or slower than PRODUCE_TIMEOUT_MS: 503 + Retry-After (the click may still land). */
  async function produce(req: FastifyRequest, reply: FastifyReply, msg: ClickMessage, key: string) {
    try {
      await producer.send(clicksTopic, { key, value: JSON.stringify(msg), headers: CLICK_HEADERS });
    } catch (err) {
      unacked(req.log, err, 'click not acknowledged by Kafka');
      reply.header('retry-after', RETRY_AFTER_SECONDS);
      throw new HttpError(503, CLICK_FAILED);
    }
  }

  const schema = {
    tags: ['tracking'],
    summary: 'Record a click on a referral link',
    description:
      'Public (no auth). Answers 200 only after Kafka acknowledged the click (acks=all): a 200 is never lost. ' +
      'Errors: 400 `affiliate_url is required`, `Invalid affiliate_url`, `No aff parameter found in affiliate_url`, ' +
      '`Referral link not found`, `Invalid referral link configuration`; 503 `Click tracking failed` with Retry-After.',
    body: ClickBody,
    response: clickResponses,
  };
  registerTrackRoute(app, 'click', { schema, beforeBody: rateLimited(deps), handler });
}
