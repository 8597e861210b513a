// Invitations (CONTRACT part three "Other workspaces ask first"; docs/partners.md "Invitations"): the partner
// records of the account's email it has not claimed, which their workspaces cannot see into until the
// partner accepts one. In the partner-authenticated scope; an account whose mailbox is not verified has none
// (service.ts).
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { errorResponses } from '../../../../shared/http/server.ts';
import { storedPolicy } from '../../../../shared/domain/commission-policy.ts';
import { PolicyOut } from '../../../../shared/domain/policy-schema.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { Nullable, Obj, dataOf } from '../../common.ts';
import type { ApiDeps } from '../../deps.ts';
import { partnerOf, partnerSecurity } from '../partner-auth/access.ts';
import type { InvitationRow } from './dal.ts';
import { answerInvitation, invitations } from './operations.ts';
import { ERR } from './service.ts';

const Invitation = Obj({
  partner_id: Type.Integer({ description: 'The partner record the workspace made for this email' }),
  workspace_name: Nullable(Type.String()),
  programs: Type.Array(
    Obj({
      id: Type.Integer(),
      name: Type.String(),
      commission: PolicyOut,
      currency: Type.String(),
    }),
  ),
});
const PartnerIdParams = Type.Object({
  partnerId: Type.Integer({ minimum: 1, description: 'Partner record id' }),
});

const toInvitation = (r: InvitationRow) => ({
  partner_id: Number(r.partner_id),
  workspace_name: r.workspace_name,
  programs: r.programs.map((p) => ({ ...p, commission: storedPolicy(p.commission) })),
});

const answerDoc = (what: string) =>
  `${what} 404 \`${ERR.invitationNotFound}\` when the record is not an invitation of the account (another ` +
  'email, claimed already, declined, in no live program, or your mailbox not verified yet).';

export function registerPartnerClaimRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const tags = ['partner'];

  app.get(
    '/api/partner/invitations',
    {
      schema: {
        tags,
        summary: 'Partner records of your email that workspaces made and you have not joined',
        description:
          'A workspace that adds a partner with your email sees nothing of your account (no payout method, no ' +
          'name) until you accept its invitation here; an invite mailed to you is the other way in. Empty ' +
          'until a sign-in link mailed to your address has been followed (`mailbox_verified` in GET ' +
          '/api/partner/me): an invite URL is shown to the advertiser who made it, so accepting one does not ' +
          'prove the address to other workspaces.',
        security: partnerSecurity,
        response: { 200: dataOf(Type.Array(Invitation)), ...errorResponses(401, 403) },
      },
    },
    async (req) => ({ data: (await invitations(sql, partnerOf(req).accountId)).map(toInvitation) }),
  );

  for (const answer of ['accept', 'decline'] as const) {
    app.post(
      `/api/partner/invitations/:partnerId/${answer}`,
      {
        schema: {
          tags,
          summary:
            answer === 'accept'
              ? 'Join a workspace: claim its partner record of your email'
              : 'Decline an invitation: it is not shown again',
          description: answerDoc(
            answer === 'accept'
              ? "The record's programs, links, money and notifications become yours, and its workspace sees " +
                  'your payout method. Answers the invitation accepted.'
              : 'The workspace is not told. Answers the invitation declined.',
          ),
          security: partnerSecurity,
          params: PartnerIdParams,
          response: { 200: dataOf(Invitation), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => ({
        data: toInvitation(
          await answerInvitation(sql, partnerOf(req).accountId, req.params.partnerId, answer),
        ),
      }),
    );
  }
}
