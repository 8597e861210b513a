// Partner codes (CONTRACT part three "Codes as well as links"; docs/codes.md): the advertiser creates a
// partner's codes, lists them per partner or per program, and deactivates one (partners:write to change,
// program:read to read); a signed-in partner lists its own in a program. A sale naming an active code is
// attributed by it (services/workers/attribution/by-code.ts).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError, errorResponses } from '../../../../shared/http/server.ts';
import { Data, DataList, Nullable } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import type { ApiDeps } from '../../deps.ts';
import { ProgramParams, managementSecurity, parseId, programOf, requireProgram } from '../../common.ts';
import { partnerOf, partnerSecurity } from '../partner-auth/access.ts';
import { partnerProgramOf as accountProgramOf } from '../partner-portal/dal.ts';
import * as dal from './dal.ts';
import { ADAPTERS } from '../../../../shared/processors/index.ts';
import {
  CODE_RE,
  CODE_STATUSES,
  ERR,
  MAX_PROCESSOR_ID,
  PROCESSORS,
  codeInput,
  toCode,
  toPartnerCode,
} from './service.ts';

const PartnerParams = Type.Object({
  id: Type.Integer({ minimum: 1, description: 'Program id' }),
  partnerId: Type.Integer({ minimum: 1, description: 'Partner id' }),
});
const CodeParams = Type.Object({
  id: Type.Integer({ minimum: 1, description: 'Program id' }),
  codeId: Type.Integer({ minimum: 1, description: 'Code id' }),
});

const ProcessorId = Nullable(
  Type.String({ minLength: 1, maxLength: MAX_PROCESSOR_ID, errorMessage: ERR.processorIds }),
  ERR.processorIds,
);
const ProcessorIdsIn = Type.Object(
  Object.fromEntries(PROCESSORS.map((p) => [p, Type.Optional(ProcessorId)])),
  {
    additionalProperties: false,
    errorMessage: ERR.processorIds,
    description:
      `The processor's discount ids of this code: ${PROCESSORS.map((p) => `${ADAPTERS[p].title} ${ADAPTERS[p].discountId}`).join(', ')}. ` +
      'A sale carrying one of them is attributed by the code.',
  },
);
// Property order is the order of the checks (see shared/http/validation.ts).
const NewCode = Type.Object({
  code: Type.String({ pattern: CODE_RE.source, errorMessage: ERR.code }),
  processor_ids: Type.Optional(Nullable(ProcessorIdsIn, ERR.processorIds)),
});

const CodeOut = Type.Object({
  id: Type.Integer(),
  code: Type.String(),
  partner_id: Type.Integer(),
  program_id: Type.Integer(),
  processor_ids: Type.Object(Object.fromEntries(PROCESSORS.map((p) => [p, Type.Optional(Type.String())]))),
  status: Type.String({ enum: [...CODE_STATUSES] }),
  created_at: Type.String({ format: 'date-time' }),
});
const PartnerCodeOut = Type.Object({
  id: Type.Integer(),
  code: Type.String(),
  status: Type.String({ enum: [...CODE_STATUSES] }),
  created_at: Type.String({ format: 'date-time' }),
});

export function registerCodeRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const base = '/api/advertiser/affiliate-programs/:id';

  /** The partner-program of partner `partnerId` in the program, or 404. */
  async function partnerProgram(programId: number, partnerId: number): Promise<string> {
    const pp = Number.isSafeInteger(partnerId)
      ? await dal.partnerProgramOf(sql, programId, partnerId)
      : undefined;
    if (pp === undefined) throw new HttpError(404, ERR.partnerNotInProgram);
    return pp;
  }

  app.post(
    `${base}/partners/:partnerId/codes`,
    {
      preValidation: requireProgram(sql, 'partners:write'),
      schema: {
        tags: ['management'],
        summary: "Create a partner code (a coupon that attributes the program's sales to the partner)",
        description:
          'Scope partners:write. `code`: 3 to 32 of `A-Z a-z 0-9 _ -`, unique in the program regardless of case ' +
          '(a deactivated code keeps its name). `processor_ids`: the discount ids at the processors that stand ' +
          'for this code. Errors: 400 `' +
          ERR.code +
          '`, `' +
          ERR.processorIds +
          '`; 404 `Program not found`, `' +
          ERR.partnerNotInProgram +
          '`; 409 `' +
          ERR.taken +
          '`, `' +
          ERR.processorIdTaken('<processor>', '<code>') +
          '` (a processor id stands for one code of the program, a deactivated one included).',
        security: managementSecurity,
        params: PartnerParams,
        body: NewCode,
        response: { 201: Data(CodeOut), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const { programId } = programOf(req);
      const partnerId = req.params.partnerId;
      const ppId = await partnerProgram(programId, partnerId);
      const input = codeInput(req.body);
      const row = await dal.insertCode(sql, {
        programId,
        partnerId,
        ppId,
        code: input.code,
        processorIds: input.processor_ids,
      });
      if (row === 'taken') throw new HttpError(409, ERR.taken);
      if ('usedBy' in row) throw new HttpError(409, ERR.processorIdTaken(row.processor, row.usedBy));
      return reply.code(201).send({ data: toCode(row) });
    },
  );

  app.get(
    `${base}/partners/:partnerId/codes`,
    {
      preValidation: requireProgram(sql, 'program:read'),
      schema: {
        tags: ['management'],
        summary: "The partner's codes in the program (active and inactive), oldest first",
        description: `Scope program:read. 404 \`${ERR.partnerNotInProgram}\`.`,
        security: managementSecurity,
        params: PartnerParams,
        response: { 200: DataList(CodeOut), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => {
      const { programId } = programOf(req);
      await partnerProgram(programId, req.params.partnerId);
      return { data: (await dal.codesOf(sql, programId, req.params.partnerId)).map(toCode) };
    },
  );

  app.get(
    `${base}/codes`,
    {
      preValidation: requireProgram(sql, 'program:read'),
      schema: {
        tags: ['management'],
        summary: "The program's partner codes (active and inactive), oldest first",
        description: 'Scope program:read.',
        security: managementSecurity,
        params: ProgramParams,
        response: { 200: DataList(CodeOut), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => ({ data: (await dal.codesOf(sql, programOf(req).programId, null)).map(toCode) }),
  );

  app.delete(
    `${base}/codes/:codeId`,
    {
      preValidation: requireProgram(sql, 'partners:write'),
      schema: {
        tags: ['management'],
        summary: 'Deactivate a partner code: later sales naming it are not attributed by it',
        description:
          'Scope partners:write. Answers the code, status `inactive` (deactivating an inactive code changes ' +
          `nothing). The code keeps its name: it cannot be created again. 404 \`${ERR.notFound}\`.`,
        security: managementSecurity,
        params: CodeParams,
        response: { 200: Data(CodeOut), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => {
      const codeId = req.params.codeId;
      const row = Number.isSafeInteger(codeId)
        ? await dal.deactivateCode(sql, programOf(req).programId, codeId)
        : undefined;
      if (!row) throw new HttpError(404, ERR.notFound);
      return { data: toCode(row) };
    },
  );
}

/** The partner API's route (registered in the partner-authenticated scope, services/api/app.ts). */
export function registerPartnerCodeRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  app.get(
    '/api/partner/programs/:programId/codes',
    {
      schema: {
        tags: ['partner'],
        summary: "The partner's codes in the program (active and inactive), oldest first",
        description:
          'A customer who pays with one of them is attributed to the partner (docs/codes.md). 404 `Program not ' +
          'found` for a program the account has no claimed record in.',
        security: partnerSecurity,
        params: Type.Object({ programId: Type.Integer({ description: 'Program id' }) }),
        response: { 200: DataList(PartnerCodeOut), ...errorResponses(401, 404) },
      },
    },
    async (req: FastifyRequest) => {
      const id = parseId((req.params as { programId?: unknown }).programId);
      const pp = id === null ? undefined : await accountProgramOf(sql, partnerOf(req).accountId, id);
      if (!pp) throw new HttpError(404, 'Program not found');
      return { data: (await dal.codesOf(sql, id!, Number(pp.partner_id))).map(toPartnerCode) };
    },
  );
}
