// GET /api/tracking/breakdown/:programId (CONTRACT "Analytics: who and where"): a program's clicks, leads,
// conversions, revenue and commission by partner, link, country, device, browser, OS, referrer host or
// landing page, over the performance endpoint's days. Auth as performance: a dashboard session of an
// active member (dashboard:view); another workspace's program is 404. The order of the checks: access,
// a parameter given twice, the performance query's shape (dateFrom and dateTo together), then dimension,
// dateFrom, dateTo and limit; `dateFrom must not be after dateTo` and the range's length last.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { HttpError, errorResponses } from '../../../../shared/http/server.ts';
import { Checked } from '../../../../shared/http/validation.ts';
import { isPlainObject } from '../../../../shared/json.ts';
import { DateTime, Obj, StringEnum, parseId, sessionSecurity } from '../../common.ts';
import type { ApiDeps } from '../../deps.ts';
import { programAccess } from '../auth/access.ts';
import type { ProgramAccess } from '../auth/access.ts';
import { DATE_PATTERN, dateError } from '../dashboard/dates.ts';
import { checkPerformanceShape } from '../dashboard/performance.ts';
import { positiveError, queryOf } from '../dashboard/service.ts';
import { DIMENSIONS, KEYS_PER_DAY } from '../../../../shared/rollups/rules.ts';
import {
  DEFAULT_LIMIT,
  LIMIT_ERROR,
  MAX_LIMIT,
  dimensionError,
  parseBreakdownQuery,
  readBreakdown,
} from './service.ts';

const DAYS = 'With the other date: a custom range of whole UTC days (ISO 8601 date or date-time, inclusive)';

export const breakdownSchema = {
  tags: ['dashboard'],
  summary:
    'Clicks, leads, conversions, revenue and commission by partner, link, country, device, referrer or page',
  description:
    'One row per key of the dimension over the days (the period rules of performance), sorted by clicks ' +
    '(descending) then key, at most `limit`. `partner` and `link`: every metric is theirs (key: the id, ' +
    'label: the partner name or short link). The other dimensions count clicks by the click, and leads, ' +
    "conversions, revenue and commission by the customer's attributing click (its first): `country` (ISO " +
    'code, label the English name), `device` (mobile, desktop, tablet, bot, ...), `browser`, `os`, ' +
    '`referrer` (host of referrer_url, lower case), `landing_page` (page_url without query or fragment). ' +
    'A missing value is key `unknown`. A visit dimension keeps at most ' +
    `${KEYS_PER_DAY} distinct keys per program and UTC day (the first seen that day); the rest of that ` +
    'day counts under `other`. Test events are excluded; a refund changes nothing (the rollups count what ' +
    'was earned that day, like performance). `meta.keys`: the number of distinct keys in the range. ' +
    'Reads O(days x keys) from the daily rollup.',
  security: sessionSecurity,
  params: Type.Object({ programId: Type.Integer({ description: 'Program id' }) }),
  querystring: Obj({
    dimension: Checked<string>({ type: 'string', enum: [...DIMENSIONS] }, dimensionError),
    // Checked before the fields, and only without dates (checkPerformanceShape): here it is documented.
    period: Checked<string>({ type: 'string', enum: ['7d', '30d', '90d', 'all'], default: '7d' }, () => null),
    dateFrom: Checked<string>(
      { type: 'string', pattern: DATE_PATTERN, description: DAYS },
      dateError('dateFrom'),
    ),
    dateTo: Checked<string>(
      { type: 'string', pattern: DATE_PATTERN, description: DAYS },
      dateError('dateTo'),
    ),
    limit: Checked<number>(
      { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
      positiveError(MAX_LIMIT, LIMIT_ERROR),
    ),
  }),
  response: {
    200: Obj({
      data: Type.Array(
        Obj({
          key: Type.String(),
          label: Type.String(),
          clicks: Type.Integer(),
          leads: Type.Integer(),
          conversions: Type.Integer(),
          revenue: Type.Number({ description: 'Dollars (the program currency), 2 decimals' }),
          commission: Type.Number({ description: 'Dollars (the program currency), 2 decimals' }),
        }),
      ),
      meta: Obj({
        dimension: StringEnum(DIMENSIONS),
        period: StringEnum(['7d', '30d', '90d', 'all', 'custom']),
        dateFrom: DateTime(),
        dateTo: DateTime(),
        keys: Type.Integer({ description: 'Distinct keys in the range (before limit)' }),
      }),
    }),
    ...errorResponses(400, 401, 403, 404),
  },
};

export function registerAnalyticsRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { sql } = deps;
  const checked = new WeakMap<FastifyRequest, ProgramAccess>();

  /** A dashboard session with dashboard:view on the path's program (as performance); checked first. */
  const requireAccess = async (req: FastifyRequest) => {
    const p = req.principal;
    if (!p || p.kind !== 'session') throw new HttpError(401, 'A dashboard session is required');
    const raw = isPlainObject(req.params) ? req.params.programId : undefined;
    checked.set(req, await programAccess(sql, p, parseId(raw) ?? 0, 'dashboard:view'));
  };

  app.get(
    '/api/tracking/breakdown/:programId',
    {
      preValidation: [requireAccess, async (req) => checkPerformanceShape(queryOf(req))],
      schema: breakdownSchema,
    },
    async (req) => {
      const access = checked.get(req);
      if (access === undefined) throw new Error('route has no requireAccess hook');
      return readBreakdown(sql, access.programId, parseBreakdownQuery(queryOf(req)));
    },
  );
}
