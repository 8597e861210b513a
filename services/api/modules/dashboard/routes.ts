// Dashboard reads (spec 4.5-4.7, CONTRACT "Tracking decisions"): GET /api/tracking/status/:programId,
// /api/tracking/events/:programId and /api/tracking/performance/:programId. All three need a dashboard
// session (`sess_`); an `affk_` key is 401. Program visibility and permissions come from programAccess:
// a program of a workspace the user is not a member of is 404, a missing permission or an inactive
// membership 403 (status: tracking:read; events: tracking:list; performance: dashboard:view, which every
// role has, so it amounts to "active member").
//
// Decisions beyond the spec and the contract:
// - Event ids are strings (click ids are 64-bit snowflakes, beyond a JSON number's exact range).
// - Dates: see dates.ts. Events: eventType `all` (the default), `click`, `lead` or `conversion`; events
//   with equal timestamps are ordered by id descending, then kind. `converted`: the click's customer (by
//   click_id), or the lead's customer, has status `conversion`.
// - Performance: dateFrom and dateTo override period and must come together (only one → 400); rows are
//   whole UTC days from dateFrom's day to dateTo's day (at most 3660); meta.period is then `custom`. With
//   both dates, period is ignored (not validated). `all` runs from the program's creation day to today.
//   meta dates are the first instant of the first day and the last millisecond of the last day.
// How the reads stay fast: dal.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from '../../../../shared/http/server.ts';
import { isPlainObject } from '../../../../shared/json.ts';
import { parseId } from '../../common.ts';
import type { ApiDeps } from '../../deps.ts';
import { programAccess } from '../auth/access.ts';
import type { Permission, Principal, ProgramAccess } from '../auth/access.ts';
import { createDashboardDal } from './dal.ts';
import { eventsSchema, performanceSchema, statusSchema } from './schemas.ts';
import { eventsBody, parseEventsQuery, readEventsPage } from './events.ts';
import {
  checkMemberFilter,
  checkPerformanceShape,
  memberFilterOf,
  parsePerformanceQuery,
  readPerformance,
} from './performance.ts';
import { queryOf } from './service.ts';
import { statusBody } from './status.ts';

export function registerDashboardRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { sql } = deps;
  const dal = createDashboardDal(sql);

  /** The session's access to the path's program; any other credential is 401. */
  async function access(
    req: { principal?: Principal; params: unknown },
    permission: Permission,
  ): Promise<ProgramAccess> {
    const p = req.principal;
    if (!p || p.kind !== 'session') throw new HttpError(401, 'A dashboard session is required');
    const raw = isPlainObject(req.params) ? req.params.programId : undefined;
    return programAccess(sql, p, parseId(raw) ?? 0, permission);
  }

  // The access check runs in preValidation, on the raw path text (before the params are converted), so its
  // 401/404/403 come before any 400 of the query; for events and performance, a parameter given twice is
  // the next 400 (queryOf).
  const checked = new WeakMap<FastifyRequest, { access: ProgramAccess; programId: string }>();
  const requireAccess = (permission: Permission) => async (req: FastifyRequest) => {
    const acc = await access(req, permission);
    checked.set(req, { access: acc, programId: (req.params as { programId: string }).programId });
  };
  const onceEach = async (req: FastifyRequest) => void queryOf(req);
  const accessOf = (req: FastifyRequest) => {
    const c = checked.get(req);
    if (c === undefined) throw new Error('route has no requireAccess hook');
    return c;
  };

  app.get(
    '/api/tracking/status/:programId',
    { preValidation: requireAccess('tracking:read'), schema: statusSchema },
    async (req) => {
      const { access: acc, programId } = accessOf(req);
      const row = await dal.status(acc.programId, acc.workspaceId);
      return statusBody(programId, row, new Date());
    },
  );

  app.get(
    '/api/tracking/events/:programId',
    { preValidation: [requireAccess('tracking:list'), onceEach], schema: eventsSchema },
    async (req) => {
      const acc = accessOf(req).access;
      const q = parseEventsQuery(queryOf(req));
      const { total, rows } = await readEventsPage(dal, acc.programId, q);
      return eventsBody(q, total, rows);
    },
  );

  app.get(
    '/api/tracking/performance/:programId',
    {
      preValidation: [requireAccess('dashboard:view'), async (req) => checkPerformanceShape(queryOf(req))],
      schema: performanceSchema,
    },
    async (req) => {
      const acc = accessOf(req).access;
      const query = queryOf(req);
      const q = parsePerformanceQuery(query);
      const filter = memberFilterOf(query);
      await checkMemberFilter(sql, acc.programId, filter);
      return readPerformance(sql, acc.programId, q, filter);
    },
  );
}
