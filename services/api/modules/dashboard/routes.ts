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
import type { FastifyInstance } from 'fastify';
import { HttpError, noValidation } from '../../../../shared/http/server.ts';
import { isPlainObject } from '../../../../shared/json.ts';
import { parseId } from '../../common.ts';
import type { ApiDeps } from '../../deps.ts';
import { programAccess } from '../auth/access.ts';
import type { Permission, Principal, ProgramAccess } from '../auth/access.ts';
import { createDashboardDal } from './dal.ts';
import { dayOfMs } from './dates.ts';
import { eventsSchema, performanceSchema, statusSchema } from './schemas.ts';
import {
  eventsBody,
  parseEventsQuery,
  parsePerformanceQuery,
  performanceBody,
  periodDays,
  previousDays,
  queryOf,
  readEventsPage,
  statsByDay,
  statusBody,
} from './service.ts';

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

  const opts = { validatorCompiler: noValidation };

  app.get('/api/tracking/status/:programId', { ...opts, schema: statusSchema }, async (req) => {
    const acc = await access(req, 'tracking:read');
    const row = await dal.status(acc.programId, acc.workspaceId);
    return statusBody((req.params as { programId: string }).programId, row, new Date());
  });

  app.get('/api/tracking/events/:programId', { ...opts, schema: eventsSchema }, async (req) => {
    const acc = await access(req, 'tracking:list');
    const q = parseEventsQuery(queryOf(req));
    const { total, rows } = await readEventsPage(dal, acc.programId, q);
    return eventsBody(q, total, rows);
  });

  app.get('/api/tracking/performance/:programId', { ...opts, schema: performanceSchema }, async (req) => {
    const acc = await access(req, 'dashboard:view');
    const q = parsePerformanceQuery(queryOf(req));
    const today = dayOfMs(Date.now());
    const { first, last } =
      q.period === 'custom'
        ? q
        : periodDays(
            q.period,
            today,
            q.period === 'all' ? dayOfMs((await dal.programCreatedAt(acc.programId)).getTime()) : today,
          );
    const prev = previousDays(first, last);
    const [stats, partners] = await Promise.all([
      dal.dailyStats(acc.programId, prev.first, last),
      dal.partnersByDay(acc.programId, prev.first, last),
    ]);
    return performanceBody(q.period, first, last, statsByDay(stats, partners));
  });
}
