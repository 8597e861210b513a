// The public side of a program (CONTRACT part two "Applications"; docs/partners.md "Applications"): its
// page's data and the application form. No credential is needed; what an application claims is decided by
// partner-claims/service.ts (a mailbox-verified session of the applicant's own email claims the new record at
// once; otherwise a mailed sign-in link does). Applications are rate-limited per IP
// (APPLY_RATE_LIMIT_PER_MINUTE, 429 with Retry-After).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { HttpError, errorResponses } from '../../../../shared/http/server.ts';
import { Checked, Email, Nullable as NullableIn, Trimmed } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { PolicyOut } from '../../../../shared/domain/policy-schema.ts';
import { hashPassword } from '../../../../shared/domain/passwords.ts';
import { Nullable, Obj, dataOf, requireBodyObject } from '../../common.ts';
import type { ApiDeps } from '../../deps.ts';
import { authenticatePartner, limitApplications } from '../partner-auth/access.ts';
import { normalEmail, optionalPasswordError } from '../partner-auth/service.ts';
import { ERR as PARTNER_ERR } from '../partners/service.ts';
import { publicProgram } from './dal.ts';
import type { PublicProgramRow } from './dal.ts';
import { ERR, toPublicProgram, websiteError } from './service.ts';
import { applyToProgram } from './operations.ts';
import { groupBySlug } from '../groups/dal.ts';
import { ERR as GROUP_ERR } from '../groups/service.ts';

declare module 'fastify' {
  interface FastifyRequest {
    publicProgram?: PublicProgramRow;
  }
}

const SlugParams = Type.Object({ slug: Type.String({ description: 'The program slug' }) });
const GroupQuery = Type.Object({
  group: Type.Optional(
    Type.String({
      maxLength: 100,
      description: 'The slug of a group of the program: its terms (GET), the group an applicant joins (POST)',
      errorMessage: GROUP_ERR.applyGroup,
    }),
  ),
});
const tags = ['public'];

// Property order is the order of the checks (shared/http/validation.ts).
const ApplyBody = Type.Object({
  name: Trimmed(200, { errorMessage: ERR.name }),
  email: Email(320, { errorMessage: ERR.email }),
  password: Type.Optional(
    Checked<string | null>(
      { type: ['string', 'null'], minLength: 10, maxLength: 1024 },
      optionalPasswordError,
    ),
  ),
  website: Type.Optional(
    Checked<string | null>({ type: ['string', 'null'], format: 'uri', maxLength: 500 }, websiteError),
  ),
  message: Type.Optional(NullableIn(Type.String({ maxLength: 2000 }), ERR.message)),
});

export function registerApplicationRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;

  /** preValidation: the public, live program of `:slug`, else 404. */
  const requirePublicProgram = async (req: FastifyRequest) => {
    const slug = (req.params as { slug?: unknown }).slug;
    const row = typeof slug === 'string' && slug.length <= 63 ? await publicProgram(sql, slug) : undefined;
    if (!row) throw new HttpError(404, ERR.notFound);
    req.publicProgram = row;
  };
  const programOfReq = (req: FastifyRequest) => req.publicProgram!;
  /** The group `?group=<slug>` names (undefined: none named); a slug of no live group of the program is 400. */
  const groupOfReq = async (req: FastifyRequest) => {
    const slug = (req.query as { group?: string }).group;
    if (slug === undefined) return undefined;
    const group = await groupBySlug(sql, Number(programOfReq(req).id), slug);
    if (!group) throw new HttpError(400, GROUP_ERR.applyGroup);
    return group;
  };

  app.get(
    '/api/public/programs/:slug',
    {
      preValidation: requirePublicProgram,
      schema: {
        tags,
        summary: "A public program's page: terms and description",
        description:
          `No credential. 404 \`${ERR.notFound}\` unless the program has public_page on and is live. ` +
          "`?group=<slug>`: that group's terms (commission, hold_days); 400 `" +
          GROUP_ERR.applyGroup +
          '` for a slug of no group of the program.',
        params: SlugParams,
        querystring: GroupQuery,
        response: {
          200: dataOf(
            Obj({
              name: Type.String(),
              slug: Type.String(),
              description: Nullable(Type.String()),
              currency: Type.String(),
              cookie_window_days: Type.Integer(),
              commission: PolicyOut,
              hold_days: Type.Integer(),
              min_payout_cents: Type.Integer(),
            }),
          ),
          ...errorResponses(400, 404),
        },
      },
    },
    async (req) => ({ data: toPublicProgram(programOfReq(req), await groupOfReq(req)) }),
  );

  app.post(
    '/api/public/programs/:slug/apply',
    {
      preValidation: [
        async (req, reply) => limitApplications(sql, deps, req, reply),
        requirePublicProgram,
        requireBodyObject,
      ],
      schema: {
        tags,
        summary: 'Apply to be a partner of a public program',
        description:
          'No credential. One partner record per email per workspace: a first application answers 201 ' +
          '`{ data: { status } }` (`pending`, or `approved` when the program auto-approves, which also creates ' +
          'one link); applying again to the same program answers 200 with the current status and changes ' +
          'nothing. With `password` and no partner account for the email, an unverified account is created: ' +
          'its password signs in, and it sees nothing until a link mailed to the address is followed. A new ' +
          'partner record is claimed at once only with a partner session of that email whose mailbox is ' +
          'verified (Bearer or the portal cookie with its X-CSRF-Token); otherwise a sign-in link is mailed, ' +
          'which claims it when followed. When the workspace already had a record of this email (another ' +
          'program), the application is added to it and claims nothing: the mailed sign-in link shows it as ' +
          "an invitation. The applicant gets a confirmation and the program's owners and admins " +
          'a notification (both mailed); `partner.applied` (and `partner.approved`) are recorded. Errors: 400 ' +
          `\`${ERR.name}\`, \`${ERR.email}\`, \`password must be at least 10 characters\`, \`${ERR.website}\`, ` +
          `\`${ERR.message}\`, \`${GROUP_ERR.applyGroup}\`; 404 \`${ERR.notFound}\`; 409 (a partner's programs ` +
          'share one currency); 429 per IP with Retry-After. `?group=<slug>`: the applicant joins that group ' +
          "(else the default group), approved at once when the group's auto_approve (else the program's) says so.",
        params: SlugParams,
        querystring: GroupQuery,
        body: ApplyBody,
        response: {
          200: dataOf(Obj({ status: Type.String({ enum: ['pending', 'approved', 'rejected'] }) })),
          201: dataOf(Obj({ status: Type.String({ enum: ['pending', 'approved'] }) })),
          ...errorResponses(400, 404, 409, 429),
        },
      },
    },
    async (req, reply) => {
      const program = programOfReq(req);
      const group = await groupOfReq(req);
      const b = req.body;
      // The applicant's own session, if any (an invalid one is simply not used: this route needs none).
      const signedIn = await authenticatePartner(sql, req).then(
        (p) => p.accountId,
        () => null,
      );
      const result = await applyToProgram(deps, program, {
        name: b.name.trim(),
        email: normalEmail(b.email),
        passwordHash: typeof b.password === 'string' ? await hashPassword(b.password) : null,
        website: typeof b.website === 'string' && b.website.trim() !== '' ? b.website.trim() : null,
        message: typeof b.message === 'string' && b.message.trim() !== '' ? b.message.trim() : null,
        signedIn,
        group: group ?? null,
      });
      if ('badGroup' in result) throw new HttpError(400, GROUP_ERR.applyGroup);
      if ('existing' in result) return reply.code(200).send({ data: { status: result.existing } });
      if ('currencyConflict' in result) {
        throw new HttpError(409, PARTNER_ERR.otherCurrency(result.currencyConflict));
      }
      return reply.code(201).send({ data: { status: result.created } });
    },
  );
}
