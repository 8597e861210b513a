// The methods each path answers, for the 405 of a method a path does not declare (RFC 9110 15.5.6: with
// an `Allow` header listing the path's methods). Read from the routes themselves as they are registered
// (an onRoute hook on the root instance sees every route of every plugin), so the table cannot drift from
// them. Wildcard routes (the dashboard's GET catch-all `/*`) are left out: they would make every path
// "known", and an unknown path stays a 404. installJsonHandling (server.ts) answers from it.
import type { FastifyInstance } from 'fastify';

export interface RouteMethods {
  /** The methods of the routes whose pattern matches `path` (no query string), sorted; [] when none. */
  allowed(path: string): string[];
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `/api/x/:id/y` → /^\/api\/x\/[^/]+\/y$/ (a parameter is one non-empty path segment, as find-my-way's); a
 * parameter with its own pattern, `:id(^\\d+)`, matches that pattern (without parentheses inside it).
 */
export function routePattern(url: string): RegExp {
  const parts = url.split(/(:[A-Za-z_][A-Za-z0-9_]*(?:\([^()]*\))?)/);
  const param = (p: string) => {
    const own = /\(([^()]*)\)$/.exec(p)?.[1];
    return own === undefined ? '[^/]+' : `(?:${own.replace(/^\^/, '').replace(/\$$/, '')})`;
  };
  return new RegExp(`^${parts.map((p, i) => (i % 2 === 1 ? param(p) : escapeRegExp(p))).join('')}$`);
}

/** Records every route registered on `app` from now on. Call before any route or plugin is registered. */
export function recordRouteMethods(app: FastifyInstance): RouteMethods {
  const byUrl = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  app.addHook('onRoute', (route) => {
    if (route.url.includes('*')) return;
    let entry = byUrl.get(route.url);
    if (entry === undefined) {
      entry = { pattern: routePattern(route.url), methods: new Set() };
      byUrl.set(route.url, entry);
    }
    for (const m of [route.method].flat()) {
      entry.methods.add(m);
      // Fastify answers HEAD for every GET route (exposeHeadRoutes).
      if (m === 'GET') entry.methods.add('HEAD');
    }
  });
  return {
    allowed(path) {
      const methods = new Set<string>();
      for (const { pattern, methods: ms } of byUrl.values()) {
        if (pattern.test(path)) for (const m of ms) methods.add(m);
      }
      return [...methods].sort();
    },
  };
}
