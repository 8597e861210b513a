// The advertiser dashboard (services/dashboard, a Vite SPA) served by the web process at the base URL
// (docs/dashboard.md "Serving"). The files of services/dashboard/dist are read once at boot, gzipped once,
// and answered from memory: hashed /assets/* are immutable for a year, index.html is revalidated every
// time. `GET /` and any GET of an unknown path outside the API, tracking and operations prefixes that
// accepts HTML (text/html, text/* or */*: wantsHtml) answer index.html, so the SPA's history routes (/programs/1/overview, /settings, ...)
// load on a refresh or a pasted link. Unknown /api/* paths keep their JSON 404. When dist is missing the
// process still starts; those pages answer 503 "dashboard not built". The portal's pages (partner.html) send
// Referrer-Policy: no-referrer, and an older invite or sign-in link (its token in the path) is no-store.
import { readFile, readdir, stat } from 'node:fs/promises';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../shared/logger.ts';

/** Where `npm run build:dashboard` writes the SPA. */
export const DASHBOARD_DIST = fileURLToPath(new URL('../dashboard/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};
const COMPRESSIBLE = new Set([
  '.html',
  '.js',
  '.mjs',
  '.css',
  '.json',
  '.map',
  '.svg',
  '.txt',
  '.webmanifest',
]);

/** The partner portal and the public program pages: partner.html, the app's second entry (docs/portal.md). */
const PORTAL = /^\/(partner|p)(\/|$)/;

/**
 * An invite or sign-in link of the older form, its token in the path (`/partner/invite/<token>`,
 * `/partner/magic/<token>`; links are mailed as `/partner/invite#<token>` now, docs/security.md): the page
 * is the same, never stored by a cache (its URL holds the token).
 */
const TOKEN_PATH = /^\/partner\/(invite|magic)\/[^/]/;

/** Paths that are never the SPA: their unknown URLs stay the JSON 404. */
const NOT_SPA = /^\/(api|track|js|healthz|readyz|metrics)(\/|$)/;

export const IMMUTABLE = 'public, max-age=31536000, immutable';
export const NOT_BUILT = 'dashboard not built: run npm run build:dashboard';

/**
 * The page's security headers: scripts and styles from this origin only (Vite emits no inline script),
 * no framing, no MIME sniffing. Inline style attributes are allowed (charts size their canvas with them).
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; " +
    "frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
};
/**
 * The portal's pages send no Referer at all: an invite or sign-in page opened from an older link holds its
 * token in the address until the page takes it out, and the requests that page makes must not carry it.
 */
const PORTAL_HEADERS = { ...SECURITY_HEADERS, 'referrer-policy': 'no-referrer' };

export interface StaticFile {
  body: Buffer;
  gzip: Buffer | null;
  type: string;
  cacheControl: string;
}

export interface DashboardFiles {
  /** URL path (`/assets/index-abc123.js`, `/favicon.svg`) → file; index.html is under `/`. */
  files: Map<string, StaticFile>;
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue; // the build stamp, editor files
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listFiles(path)));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** Reads the built SPA in `dir`; null when it has no index.html (not built). */
export async function loadDashboard(dir = DASHBOARD_DIST): Promise<DashboardFiles | null> {
  const index = await stat(join(dir, 'index.html')).catch(() => null);
  if (!index?.isFile()) return null;
  const files = new Map<string, StaticFile>();
  for (const path of await listFiles(dir)) {
    const rel = relative(dir, path).split(sep).join('/');
    const ext = extname(rel).toLowerCase();
    const body = await readFile(path);
    const gzip = COMPRESSIBLE.has(ext) && body.length > 512 ? gzipSync(body, { level: 9 }) : null;
    const isIndex = rel === 'index.html';
    files.set(isIndex ? '/' : `/${rel}`, {
      body,
      gzip: gzip && gzip.length < body.length ? gzip : null,
      type: TYPES[ext] ?? 'application/octet-stream',
      // Vite names everything under assets/ by content hash; other files keep their names.
      cacheControl: rel.startsWith('assets/') ? IMMUTABLE : 'no-cache',
    });
  }
  return { files };
}

/** `portal`: the portal's page (its Referrer-Policy); `noStore`: a URL no cache may keep. */
function send(
  req: FastifyRequest,
  reply: FastifyReply,
  file: StaticFile,
  opts: { portal?: boolean; noStore?: boolean } = {},
): FastifyReply {
  reply
    .header('content-type', file.type)
    .header('cache-control', opts.noStore ? 'no-store' : file.cacheControl);
  if (file.type.startsWith('text/html')) reply.headers(opts.portal ? PORTAL_HEADERS : SECURITY_HEADERS);
  if (file.gzip) {
    reply.header('vary', 'accept-encoding');
    if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
      return reply.header('content-encoding', 'gzip').send(file.gzip);
    }
  }
  return reply.send(file.body);
}

// Whether the request takes an HTML page: its Accept names text/html, text/* or */* (curl and most HTTP
// clients send "*/*", and SPA servers answer those with the page). A client that lists other types alone
// (application/json), or sends no Accept, gets the JSON 404.
export function wantsHtml(req: Pick<FastifyRequest, 'headers'>): boolean {
  const accept = req.headers.accept ?? '';
  return /(^|,)\s*(text\/html|text\/\*|\*\/\*)\s*(;|,|$)/i.test(accept);
}

/** The app's own answer for what no route serves: 404, or 405 with Allow (shared/http/server.ts). */
function notFound(reply: FastifyReply): FastifyReply {
  reply.callNotFound();
  return reply;
}

/**
 * Registers `/` and a GET catch-all (find-my-way tries it only after every other route) on `app`.
 * `dashboard` null: not built, the pages answer 503.
 */
export function registerDashboard(app: FastifyInstance, dashboard: DashboardFiles | null, log: Logger): void {
  if (!dashboard) log.warn({ dir: DASHBOARD_DIST }, NOT_BUILT);
  const index = dashboard?.files.get('/');
  const portal = dashboard?.files.get('/partner.html');
  const page = (
    req: FastifyRequest,
    reply: FastifyReply,
    html: StaticFile | null | undefined = index,
    noStore = false,
  ) => {
    if (html) return send(req, reply, html, { portal: html === portal, noStore });
    return reply
      .code(503)
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('retry-after', '60')
      .send(
        `<!doctype html><meta charset="utf-8"><title>Dashboard not built</title>` + `<p>${NOT_BUILT}</p>\n`,
      );
  };
  app.get('/', { schema: { hide: true } }, page);
  app.get('/*', { schema: { hide: true } }, async (req, reply) => {
    let path: string;
    try {
      path = decodeURIComponent(req.url.split('?')[0]!);
    } catch {
      return notFound(reply);
    }
    const file = path === '/' ? undefined : dashboard?.files.get(path);
    if (file) return send(req, reply, file, { portal: file === portal });
    // A missing asset is a 404 (an old tab asking for a replaced bundle must not get HTML as script).
    if (NOT_SPA.test(path) || path.startsWith('/assets/') || !wantsHtml(req)) return notFound(reply);
    return page(req, reply, PORTAL.test(path) ? (portal ?? null) : index, TOKEN_PATH.test(path));
  });
}
