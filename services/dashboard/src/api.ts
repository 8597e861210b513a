// The dashboard's only way to the API. The session is an HttpOnly cookie the browser sends by itself
// (same origin); state-changing calls carry the CSRF token the session endpoint returned.
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Seconds from a 429's or 503's Retry-After header, when it had one. */
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;
/** Set by the session code after log in, sign up and on boot (GET /api/auth/session). */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

type Query = Record<string, string | number | boolean | null | undefined>;

function url(path: string, query?: Query): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {}))
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

async function call<T>(method: string, path: string, body?: unknown, query?: Query): Promise<T> {
  return (await callWithStatus<T>(method, path, body, query)).body;
}

/** The answer's body and its status (201 created, 200 already there, ...); a non-2xx throws ApiError. */
async function callWithStatus<T>(
  method: string,
  path: string,
  body?: unknown,
  query?: Query,
): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(url(path, query), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiError(0, 'The service cannot be reached. Check your connection and try again.');
  }
  if (res.status === 204) return { status: 204, body: undefined as T };
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // A proxy's HTML error page, for instance.
  }
  if (!res.ok) {
    const error =
      json && typeof json === 'object' && typeof (json as { error?: unknown }).error === 'string'
        ? (json as { error: string }).error
        : `Request failed (${res.status})`;
    const retryAfter = Number(res.headers.get('retry-after'));
    throw new ApiError(res.status, error, retryAfter > 0 ? retryAfter : null);
  }
  return { status: res.status, body: json as T };
}

export const api = {
  get: <T>(path: string, query?: Query) => call<T>('GET', path, undefined, query),
  post: <T>(path: string, body?: unknown, query?: Query) => call<T>('POST', path, body ?? {}, query),
  put: <T>(path: string, body?: unknown, query?: Query) => call<T>('PUT', path, body ?? {}, query),
  del: <T>(path: string, query?: Query) => call<T>('DELETE', path, undefined, query),
  /** A POST whose status matters to the caller (201 or 200), with the body. */
  postWithStatus: <T>(path: string, body?: unknown) => callWithStatus<T>('POST', path, body ?? {}),
};
