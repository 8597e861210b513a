// Partners of a program (CONTRACT "Partners, links, commissions, balances" and part two "Partners who sign
// in"): add one (with an invite), list them with their balances and review state, approve, reject and
// re-invite. Reads need program:read on the program; adding needs program:update; approve, reject and
// invite need partners:write.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { HttpError, errorResponses } from '../../../../shared/http/server.ts';
import { Data, DataList, Email, Nullable, StringEnum, Trimmed } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import type { ApiDeps } from '../../deps.ts';
import { ProgramParams, managementSecurity, programOf, requireProgram } from '../../common.ts';
import { partnersOfProgram } from './dal.ts';
import { afterAdvertiserAdded } from './review.ts';
import { addPartnerToProgram, reissueInvite, reviewPartner } from './operations.ts';
import { ALL_STATUSES, ERR, PARTNER_STATUSES, partnerInput, reasonOf, toPartnerCreated } from './service.ts';
import { PartnerView, partnerView } from '../../../../shared/views/partner.ts';

// Property order is the order of the checks (see shared/http/validation.ts).
const PartnerInput = Type.Object({
  name: Trimmed(200, { errorMessage: ERR.name }),
  email: Email(320, { errorMessage: ERR.email }),
  status: Type.Optional(
    Nullable(StringEnum(PARTNER_STATUSES, ERR.status, { default: 'approved' }), ERR.status),
  ),
  group_id: Type.Optional(
    Nullable(
      Type.Integer({ minimum: 1, description: 'The group it joins (default: the default group)' }),
      ERR.groupIdType,
    ),
  ),
});

const Status = Type.String({ enum: [...ALL_STATUSES] });
const PartnerParams = Type.Object({
  id: Type.Integer({ minimum: 1, description: 'Program id' }),
  partnerId: Type.Integer({ minimum: 1, description: 'Partner id' }),
});
export function registerPartnerRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const base = '/api/advertiser/affiliate-programs/:id';

  app.post(
    `${base}/partners`,
    {
      preValidation: requireProgram(sql, 'program:update'),
      schema: {
        tags: ['management'],
        summary: 'Add a partner to the program',
        description:
          'Scope program:update. A partner of the same workspace with this email (case-insensitive) is reused; ' +
          'its name is kept. `invite_url` (`{PUBLIC_URL}/partner/invite#<token>`, 14 days, shown only here) ' +
          'lets the partner sign in to the portal; it is also mailed to the partner. It is null when a partner ' +
          'account has already claimed the record: the partner then sees the program at once and is notified. ' +
          'Records `partner.created`. Errors: 400 `name is required and must be 1 to 200 characters`, `email must be a ' +
          "valid email address`, `status must be 'approved' or 'pending'`, `" +
          ERR.groupIdType +
          '`, `' +
          ERR.groupId +
          '` (`group_id` names the group it joins: unknown, deleted or another program’s); 404 `Program ' +
          'not found`; 409 ' +
          '`Partner is already in this program`, `Partner earns in <currency> in its other programs; a ' +
          "partner's programs share one currency (its balance is one amount)`.",
        security: managementSecurity,
        params: ProgramParams,
        body: PartnerInput,
        response: {
          201: Data(
            Type.Object({
              partner: Type.Object({ id: Type.Integer(), name: Type.String(), email: Type.String() }),
              partner_program: Type.Object({
                id: Type.Integer(),
                status: Status,
                created_at: Type.String({ format: 'date-time' }),
              }),
              invite_url: Type.Union([Type.String(), Type.Null()], {
                description: 'Shown once; null when an account already claimed the partner',
              }),
              invite_expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
            }),
          ),
          ...errorResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (req, reply) => {
      const access = programOf(req);
      const result = await addPartnerToProgram(
        sql,
        access.workspaceId,
        access.programId,
        partnerInput(req.body),
        (tx, partner, pp) => afterAdvertiserAdded(tx, deps, access, partner, pp),
      );
      if ('existing' in result) throw new HttpError(409, ERR.alreadyIn);
      if ('badGroup' in result) throw new HttpError(400, ERR.groupId);
      if ('currencyConflict' in result) throw new HttpError(409, ERR.otherCurrency(result.currencyConflict));
      return reply
        .code(201)
        .send({ data: toPartnerCreated(result.partner, result.pp, result.extra ?? null) });
    },
  );

  app.get(
    `${base}/partners`,
    {
      preValidation: requireProgram(sql, 'program:read'),
      schema: {
        tags: ['management'],
        summary: "The program's partners with their balances",
        description:
          'Scope program:read. `id` is the partner id; `balance_cents` is the partner balance over all ' +
          "programs, `program_balance_cents` the partner-program balance; `joined_at` is the partner-program's " +
          'creation time. Each balance is the sum of its ledger entries (it may be negative after a refund of a ' +
          'paid commission). `status` is pending, approved or rejected (`rejection_reason`); `source` says ' +
          'whether the advertiser added the partner or it applied (`application`: its website and message); ' +
          '`claimed` whether a partner account has claimed the record.',
        security: managementSecurity,
        params: ProgramParams,
        response: {
          200: DataList(PartnerView),
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (req) => ({ data: (await partnersOfProgram(sql, programOf(req).programId)).map(partnerView) }),
  );

  const reviewDoc = (what: string) =>
    `Scope partners:write. ${what} 404 \`${ERR.notInProgram}\` when the partner is not in the program.`;

  app.post(
    `${base}/partners/:partnerId/approve`,
    {
      preValidation: requireProgram(sql, 'partners:write'),
      schema: {
        tags: ['management'],
        summary: 'Approve a partner in the program (creates a link if it has none)',
        description: reviewDoc(
          'From pending or rejected: status approved, the partner notified (and mailed), `partner.approved` ' +
            'recorded; its links count clicks again. Approving an approved partner changes nothing but ' +
            'creates a link when it has none.',
        ),
        security: managementSecurity,
        params: PartnerParams,
        response: { 200: Data(PartnerView), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => {
      const { programId } = programOf(req);
      const row = await reviewPartner(sql, deps, programId, req.params.partnerId, { action: 'approve' });
      if (!row) throw new HttpError(404, ERR.notInProgram);
      return { data: partnerView(row) };
    },
  );

  app.post(
    `${base}/partners/:partnerId/reject`,
    {
      preValidation: requireProgram(sql, 'partners:write'),
      schema: {
        tags: ['management'],
        summary: 'Reject a partner in the program (its links stop counting clicks)',
        description: reviewDoc(
          '`{ reason? }` (at most 500 characters; shown to the partner). Status rejected; a click on its ' +
            'links answers like an inactive link. A change notifies the partner (mailed). 400 `' +
            ERR.reason +
            '`.',
        ),
        security: managementSecurity,
        params: PartnerParams,
        body: Type.Object({
          reason: Type.Optional(Nullable(Type.String({ maxLength: 500 }), ERR.reason)),
        }),
        response: { 200: Data(PartnerView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { programId } = programOf(req);
      const row = await reviewPartner(sql, deps, programId, req.params.partnerId, {
        action: 'reject',
        reason: reasonOf(req.body.reason),
      });
      if (!row) throw new HttpError(404, ERR.notInProgram);
      return { data: partnerView(row) };
    },
  );

  app.post(
    `${base}/partners/:partnerId/invite`,
    {
      preValidation: requireProgram(sql, 'partners:write'),
      schema: {
        tags: ['management'],
        summary: 'Issue a new invite for the partner (the older one stops working)',
        description: reviewDoc(
          'Answers the new `invite_url` (shown only here, valid 14 days) and mails it to the partner.',
        ),
        security: managementSecurity,
        params: PartnerParams,
        response: {
          201: Data(
            Type.Object({ invite_url: Type.String(), expires_at: Type.String({ format: 'date-time' }) }),
          ),
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (req, reply) => {
      const { programId } = programOf(req);
      const partnerId = req.params.partnerId;
      const invite = Number.isSafeInteger(partnerId)
        ? await reissueInvite(sql, deps, programId, partnerId)
        : null;
      if (!invite) throw new HttpError(404, ERR.notInProgram);
      return reply
        .code(201)
        .send({ data: { invite_url: invite.inviteUrl, expires_at: invite.expiresAt.toISOString() } });
    },
  );
}
