// Referral links of a partner in a program (CONTRACT "Partners, links, commissions, balances"): create,
// list, activate or deactivate. Reads need program:read on the program; writes need program:update.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { HttpError, errorResponses } from '../../../../shared/http/server.ts';
import { Data, DataList, Nullable, StringEnum } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import type { ApiDeps } from '../../deps.ts';
import { managementSecurity, programOf, requireProgram } from '../../common.ts';
import { findPartnerProgram, insertLink, linksOfPartner, setLinkStatus } from './dal.ts';
import { ERR, LINK_STATUSES, SHORT_LINK_RE, shortLinkCandidates, toLink } from './service.ts';

const PartnerParams = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  partnerId: Type.Integer({ minimum: 1 }),
});
const LinkParams = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  partnerId: Type.Integer({ minimum: 1 }),
  linkId: Type.Integer({ minimum: 1 }),
});

const LinkOut = Type.Object({
  id: Type.Integer(),
  short_link: Type.String(),
  status: Type.String({ enum: [...LINK_STATUSES] }),
  clicks: Type.Integer(),
  last_clicked: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const NewLink = Type.Object({
  short_link: Type.Optional(
    Nullable(
      Type.String({
        pattern: SHORT_LINK_RE.source,
        description: 'The `aff` value; 8 random URL-safe characters when omitted',
      }),
      ERR.shortLink,
    ),
  ),
});
const LinkChange = Type.Object({ status: StringEnum(LINK_STATUSES, ERR.status) });

export function registerLinkRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const base = '/api/advertiser/affiliate-programs/:id/partners/:partnerId/links';

  /** The partner-program of partner `partnerId` in the program, or 404. */
  async function partnerProgramId(programId: number, partnerId: number): Promise<number> {
    const pp = Number.isSafeInteger(partnerId)
      ? await findPartnerProgram(sql, programId, partnerId)
      : undefined;
    if (pp === undefined) throw new HttpError(404, ERR.partnerNotFound);
    return pp;
  }

  app.post(
    base,
    {
      preValidation: requireProgram(sql, 'program:update'),
      schema: {
        tags: ['management'],
        summary: 'Create a referral link for a partner of the program',
        description:
          'Scope program:update. `short_link` is the `aff` value, globally unique; 8 random URL-safe ' +
          'characters when omitted. Errors: 400 `short_link must be 1 to 64 characters: letters, digits, _ or ' +
          '-`; 404 `Partner not found in this program`; 409 `short_link is already taken`.',
        security: managementSecurity,
        params: PartnerParams,
        body: NewLink,
        response: { 201: Data(LinkOut), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const { programId } = programOf(req);
      const { partnerId } = req.params;
      const partnerProgram = await partnerProgramId(programId, partnerId);
      for (const shortLink of shortLinkCandidates(req.body.short_link)) {
        const row = await insertLink(sql, {
          shortLink,
          programId,
          partnerId,
          partnerProgramId: partnerProgram,
        });
        if (row) return reply.code(201).send({ data: toLink(row) });
      }
      throw new HttpError(409, ERR.shortLinkTaken);
    },
  );

  app.get(
    base,
    {
      preValidation: requireProgram(sql, 'program:read'),
      schema: {
        tags: ['management'],
        summary: "A partner's referral links in the program",
        description: 'Scope program:read. 404 `Partner not found in this program`.',
        security: managementSecurity,
        params: PartnerParams,
        response: { 200: DataList(LinkOut), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => {
      const { programId } = programOf(req);
      await partnerProgramId(programId, req.params.partnerId);
      return { data: (await linksOfPartner(sql, programId, req.params.partnerId)).map(toLink) };
    },
  );

  app.put(
    `${base}/:linkId`,
    {
      preValidation: requireProgram(sql, 'program:update'),
      schema: {
        tags: ['management'],
        summary: 'Activate or deactivate a referral link',
        description:
          'Scope program:update. The ingress sees the change within its cache poll interval; an inactive link ' +
          "answers clicks with 200 `{ success: false, error: 'Referral link is inactive' }`. Errors: 400 " +
          "`status must be 'active' or 'inactive'`; 404 `Referral link not found`.",
        security: managementSecurity,
        params: LinkParams,
        body: LinkChange,
        response: { 200: Data(LinkOut), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { programId } = programOf(req);
      const { partnerId, linkId } = req.params;
      if (!Number.isSafeInteger(partnerId) || !Number.isSafeInteger(linkId))
        throw new HttpError(404, ERR.linkNotFound);
      const row = await setLinkStatus(sql, { linkId, programId, partnerId, status: req.body.status });
      if (!row) throw new HttpError(404, ERR.linkNotFound);
      return { data: toLink(row) };
    },
  );
}
