// Groups (CONTRACT part four "Groups"; docs/rewards.md): a program's groups with their own policy, hold and
// auto-approval (program:read to read, program:update to change), where a partner is (PUT …/group) and a
// partner's own policy (PUT …/commission), both partners:write. Every group's and override's `commission`
// is the policy's one schema (shared/domain/policy-schema.ts).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { HttpError, errorResponses } from '../../../../shared/http/server.ts';
import { Checked, Data, DataList, Nullable, Trimmed } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { parsePolicy, storedPolicy } from '../../../../shared/domain/commission-policy.ts';
import { PolicyIn, PolicyOut, policyError } from '../../../../shared/domain/policy-schema.ts';
import { DiscountIn, DiscountOut, discountError } from '../../../../shared/domain/discount.ts';
import type { ApiDeps } from '../../deps.ts';
import {
  ProgramParams,
  isUniqueViolation,
  managementSecurity,
  programOf,
  requireProgram,
} from '../../common.ts';
import { partnerOfProgram } from '../partners/dal.ts';
import { PartnerView, partnerView } from '../../../../shared/views/partner.ts';
import * as dal from './dal.ts';
import { changeGroup, createGroup, deleteGroup, placePartner } from './operations.ts';
import { ERR, SLUG_RE, groupFields, groupSlugCandidates, toGroup } from './service.ts';

const GroupParams = Type.Object({
  id: Type.Integer({ minimum: 1, description: 'Program id' }),
  groupId: Type.Integer({ minimum: 1, description: 'Group id' }),
});
const PartnerParams = Type.Object({
  id: Type.Integer({ minimum: 1, description: 'Program id' }),
  partnerId: Type.Integer({ minimum: 1, description: 'Partner id' }),
});

const Policy = Checked<Record<string, unknown>>(PolicyIn, policyError);
const Name = Trimmed(100, { errorMessage: ERR.name });
const Slug = Type.String({ pattern: SLUG_RE.source, errorMessage: ERR.slug });
const HoldDays = Nullable(
  Type.Integer({
    minimum: 0,
    maximum: 365,
    description: "Days from a sale until its commission is payable; null: the program's hold_days",
  }),
  ERR.holdDays,
);
const AutoApprove = Nullable(
  Type.Boolean({ description: "Applications naming this group are approved at once; null: the program's" }),
  ERR.autoApprove,
);

// Property order is the order of the checks (shared/http/validation.ts).
const Discount = Checked<Record<string, unknown> | null>(
  {
    anyOf: [DiscountIn, { type: 'null' }],
    description: 'The discount for the customers its partners bring (null: none)',
  },
  discountError,
);
const rest = {
  slug: Type.Optional(Slug),
  commission: Type.Optional(Policy),
  hold_days: Type.Optional(HoldDays),
  auto_approve: Type.Optional(AutoApprove),
  discount: Type.Optional(Discount),
};
const CreateBody = Type.Object({ name: Name, ...rest });
const UpdateBody = Type.Object({ name: Type.Optional(Name), ...rest });

export const GroupOut = Type.Object({
  id: Type.Integer(),
  program_id: Type.Integer(),
  name: Type.String(),
  slug: Type.String(),
  is_default: Type.Boolean({ description: "The program's own group: its commission is the program's" }),
  commission: PolicyOut,
  hold_days: Type.Union([Type.Integer(), Type.Null()], { description: "null: the program's hold_days" }),
  auto_approve: Type.Union([Type.Boolean(), Type.Null()], {
    description: "null: the program's auto_approve",
  }),
  discount: Type.Union([DiscountOut, Type.Null()], {
    description:
      "The processor coupon for the customers its partners bring (null: none): in the click answer, the tracker's " +
      'global and GET /api/v1/track/discount',
  }),
  partners: Type.Integer({ description: 'How many partners are in it' }),
  created_at: Type.String({ format: 'date-time' }),
});

const tags = ['management'];
const security = managementSecurity;

export function registerGroupRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const base = '/api/advertiser/affiliate-programs/:id';
  const moves = { kafkaPrefix: deps.kafkaPrefix };

  async function loadGroup(programId: number, groupId: number) {
    const row = await dal.groupOf(sql, programId, groupId);
    if (!row) throw new HttpError(404, ERR.notFound);
    return toGroup(row);
  }

  app.get(
    `${base}/groups`,
    {
      preValidation: requireProgram(sql, 'program:read'),
      schema: {
        tags,
        summary: "The program's groups, the default first",
        description:
          'Scope program:read. Each with its policy, hold, auto-approval and how many partners it has.',
        security,
        params: ProgramParams,
        response: { 200: DataList(GroupOut), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => ({ data: (await dal.groupsOf(sql, programOf(req).programId)).map(toGroup) }),
  );

  app.post(
    `${base}/groups`,
    {
      preValidation: requireProgram(sql, 'program:update'),
      schema: {
        tags,
        summary: 'Create a group',
        description:
          "Scope program:update. `commission` defaults to a copy of the program's policy as it is now; " +
          "`hold_days` and `auto_approve` null (the default) follow the program's. `slug` (1–40 of a-z 0-9 -, " +
          'unique in the program) is made from the name when omitted. Errors: 400 `' +
          ERR.name +
          '`, `' +
          ERR.slug +
          '`, the commission policy messages (`percent must be …`, `recurring.mode …`, ' +
          '`product_rules[0].…`), `' +
          ERR.holdDays +
          '`, `' +
          ERR.autoApprove +
          '`, `discount.percent must be more than 0 and at most 100 (at most 4 decimals)` and the other ' +
          'discount messages (`discount.amount_cents …`, `discount.duration …`, `discount.months …`, ' +
          '`discount.processor_ids.stripe …`); 409 `' +
          ERR.slugTaken +
          '`.',
        security,
        params: ProgramParams,
        body: CreateBody,
        response: { 201: Data(GroupOut), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const { programId } = programOf(req);
      const f = groupFields(req.body);
      if (f.commission === undefined) {
        f.commission = storedPolicy(await dal.programPolicy(sql, programId));
      }
      const id = await createGroup(
        sql,
        programId,
        { ...f, name: f.name! },
        groupSlugCandidates(f.slug, f.name!),
      );
      if (id === 'taken') throw new HttpError(409, ERR.slugTaken);
      return reply.code(201).send({ data: await loadGroup(programId, Number(id)) });
    },
  );

  app.get(
    `${base}/groups/:groupId`,
    {
      preValidation: requireProgram(sql, 'program:read'),
      schema: {
        tags,
        summary: 'Read a group',
        description: `Scope program:read. 404 \`${ERR.notFound}\` for a group of another program, or deleted.`,
        security,
        params: GroupParams,
        response: { 200: Data(GroupOut), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => ({ data: await loadGroup(programOf(req).programId, req.params.groupId) }),
  );

  app.put(
    `${base}/groups/:groupId`,
    {
      preValidation: requireProgram(sql, 'program:update'),
      schema: {
        tags,
        summary: 'Change a group (only the fields given change)',
        description:
          "Scope program:update. The default group's `commission` is the program's: changing either changes " +
          'both. A changed policy prices the sales decided from then on; no existing commission changes. ' +
          '`hold_days` and `auto_approve` take null (the program’s). Errors as for create; 404 `' +
          ERR.notFound +
          '`.',
        security,
        params: GroupParams,
        body: UpdateBody,
        response: { 200: Data(GroupOut), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const { programId } = programOf(req);
      const f = groupFields(req.body);
      try {
        if (!(await changeGroup(sql, programId, req.params.groupId, f)))
          throw new HttpError(404, ERR.notFound);
      } catch (err) {
        if (isUniqueViolation(err, 'program_groups_slug')) throw new HttpError(409, ERR.slugTaken);
        throw err;
      }
      return { data: await loadGroup(programId, req.params.groupId) };
    },
  );

  app.delete(
    `${base}/groups/:groupId`,
    {
      preValidation: requireProgram(sql, 'program:update'),
      schema: {
        tags,
        summary: 'Delete a group: its partners move to the default group',
        description:
          'Scope program:update. Each partner of the group moves to the default group (a `partner.group_changed` ' +
          'event each, reason `group_deleted`); its commissions stay as they are (they keep its group_id); tier ' +
          'rules from or to it are removed; customers pinned to it follow their partner. 204; 404 `' +
          ERR.notFound +
          '`; 409 `' +
          ERR.deleteDefault +
          '`.',
        security,
        params: GroupParams,
        response: { 204: Type.Null(), ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const done = await deleteGroup(sql, moves, programOf(req).programId, req.params.groupId);
      if (done === undefined) throw new HttpError(404, ERR.notFound);
      if (done === 'default') throw new HttpError(409, ERR.deleteDefault);
      return reply.code(204).send();
    },
  );

  /** The partner's row as the partners list shows it (with its group), once the change is made. */
  async function partnerRow(programId: number, partnerId: number) {
    const row = await partnerOfProgram(sql, programId, partnerId);
    if (!row) throw new HttpError(404, ERR.notInProgram);
    return { data: partnerView(row) };
  }

  app.put(
    `${base}/partners/:partnerId/group`,
    {
      preValidation: requireProgram(sql, 'partners:write'),
      schema: {
        tags,
        summary: 'Move a partner to a group, and lock or unlock it',
        description:
          'Scope partners:write. `{ group_id, locked? }`: the partner is in that group from now on (a ' +
          '`partner.group_changed` event, reason `manual`, when it changes); sales decided from then on earn its ' +
          'rate. `locked: true` keeps tier rules from moving it; omitted keeps the lock as it is. Answers the ' +
          'partner as the partners list shows it. Errors: 400 `' +
          ERR.groupIdType +
          '`, `' +
          ERR.groupId +
          '` (unknown, deleted, or another program’s), `' +
          ERR.locked +
          '`; 404 `' +
          ERR.notInProgram +
          '`.',
        security,
        params: PartnerParams,
        body: Type.Object({
          group_id: Type.Integer({ minimum: 1, errorMessage: ERR.groupIdType }),
          locked: Type.Optional(Type.Boolean({ errorMessage: ERR.locked })),
        }),
        response: { 200: Data(PartnerView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { programId } = programOf(req);
      const { partnerId } = req.params;
      const placed = await placePartner(sql, moves, programId, partnerId, req.body.group_id, req.body.locked);
      if (placed === undefined) throw new HttpError(404, ERR.notInProgram);
      if (placed === 'group') throw new HttpError(400, ERR.groupId);
      return partnerRow(programId, partnerId);
    },
  );

  app.put(
    `${base}/partners/:partnerId/commission`,
    {
      preValidation: requireProgram(sql, 'partners:write'),
      schema: {
        tags,
        summary: "Set or clear a partner's own commission policy",
        description:
          "Scope partners:write. `{ commission: <policy> | null }`: the partner's own policy wins over its " +
          "group's and the program's for every sale decided from then on (a product rule inside it still wins " +
          'for its product); null clears it. No existing commission changes. Errors: 400 `' +
          ERR.commissionOverride +
          '` and the policy messages; 404 `' +
          ERR.notInProgram +
          '`.',
        security,
        params: PartnerParams,
        body: Type.Object({
          commission: Checked<Record<string, unknown> | null>(
            { anyOf: [PolicyIn, { type: 'null' }], description: 'A commission policy, or null to clear it' },
            (v) => (v === null ? null : v === undefined ? ERR.commissionOverride : policyError(v)),
          ),
        }),
        response: { 200: Data(PartnerView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { programId } = programOf(req);
      const { partnerId } = req.params;
      const policy = req.body.commission === null ? null : parsePolicy(req.body.commission);
      if (typeof policy === 'string') throw new HttpError(400, policy);
      if (!(await dal.setOverride(sql, programId, partnerId, policy)))
        throw new HttpError(404, ERR.notInProgram);
      return partnerRow(programId, partnerId);
    },
  );
}
