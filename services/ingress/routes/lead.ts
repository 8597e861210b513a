// POST /api/v1/track/lead (and its /api/tracking alias), spec 4.2: server mode with a tracking token, or
// browser mode where the click id proves attribution. The journey worker applies it and answers.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, errorResponses } from '../../../shared/http/server.ts';
import { parseClickId } from '../../../shared/domain/ids.ts';
import type { IngressDeps } from '../deps.ts';
import { readTrackingToken } from '../auth.ts';
import { checkOrigin } from '../cors.ts';
import { rateLimited, registerTrackRoute } from '../track-route.ts';
import { requestIdFor, sendCommand, STILL_PROCESSING_SCHEMA } from '../commands/answer.ts';
import {
  LeadBody,
  LeadFirst,
  buildLeadCommand,
  checkLeadIdentity,
  checkTestLeadProgram,
  leadInput,
  leadKey,
} from '../commands/lead.ts';
import type { Static } from '@sinclair/typebox';

const leadSchema = {
  tags: ['tracking'],
  summary: 'Record a lead (signup)',
  description:
    'Server mode with a tracking token (the customer must belong to its program) or browser mode without one ' +
    '(the click_id proves attribution). Errors: 400 `click_id or customer_key is required`, ' +
    '`Customer not found. Provide a valid click_id or customer_key.`, `Customer does not belong to this program`, ' +
    '`Customer status cannot be updated to lead. Current status: <status>`; 401 invalid token; 500 `Lead tracking failed`; 503 with Retry-After when Kafka or Postgres is unreachable ' +
    'or the worker has not answered within COMMAND_DEADLINE_MS.',
  security: [{}, { trackingToken: [] }] as Record<string, string[]>[],
  body: LeadBody,
  response: {
    200: {
      type: 'object',
      properties: {
        success: { type: 'boolean' },
        message: { type: 'string' },
        data: { type: 'object', additionalProperties: true },
      },
    },
    ...errorResponses(400, 401, 409, 500),
    503: STILL_PROCESSING_SCHEMA,
  },
};

export function registerLeadRoute(app: FastifyInstance, deps: IngressDeps): void {
  const { cache } = deps;
  const lead = async (req: FastifyRequest, reply: FastifyReply) => {
    const input = leadInput(req.body as Static<typeof LeadFirst>);
    const { ad, clickId } = input;
    const token = await readTrackingToken(req, cache);
    // Test mode needs no real token; otherwise an Authorization header must carry a valid one.
    if (token.kind === 'invalid' && !ad.testMode) throw new HttpError(401, token.reason);
    const tokenProgram = token.kind === 'valid' ? token.programId : null;
    checkLeadIdentity(input, tokenProgram);
    if (tokenProgram === null && ad.programId !== null) {
      // Browser or test mode names its program itself: it must be one that takes leads.
      const named = await cache.getProgram(ad.programId);
      if (!named || named.deleted)
        throw new HttpError(400, 'additional_data.program_id does not name a program');
    }
    let programId = tokenProgram ?? ad.programId;
    if (programId === null && clickId !== null) {
      const pp = parseClickId(clickId);
      programId = pp ? await cache.programIdForPartnerProgram(Number(pp.partnerProgramId)) : null;
    }
    checkTestLeadProgram(input, programId);
    if (req.headers.origin !== undefined && programId !== null) {
      const program = await cache.getProgram(programId);
      if (program) checkOrigin(req, reply, program);
    }
    const requestId = requestIdFor(req.headers['idempotency-key'], 'lead', programId);
    const cmd = buildLeadCommand(input, req.body, { requestId, ts: Date.now(), tokenProgram, programId });
    return sendCommand(deps, req, reply, deps.topics.clicks, leadKey(cmd, programId), cmd);
  };
  registerTrackRoute(app, 'lead', {
    schema: leadSchema,
    checkedFirst: LeadFirst,
    beforeBody: rateLimited(deps),
    handler: lead,
  });
}
