// The HTTP client of svc's own clients: the dashboard, the partner portal (services/dashboard/src/api.ts)
// and the CLI (bin/cli/context.ts). openapi-fetch over the `paths` that `npm run sdk:types` generates from
// the route schemas (sdk/typescript/src/openapi.ts): a call names a route as the OpenAPI document does
// (`api.GET('/api/advertiser/affiliate-programs/{id}', { params: { path: { id } } })`), and its 2xx
// answer's body is typed by that route's schema. Generic over the paths, so that shared/ imports nothing
// of the SDK; each client passes them.
//
// What every call does: a write (POST, PUT) without a body sends `{}`; query values undefined, null or ''
// are left out (URLSearchParams encoding); the answer's body is parsed as JSON (an empty body, 204
// included, is undefined; a 2xx body that is not JSON is null); any other status rejects with ApiError, as
// does no answer at all (status 0). No retries: a person is waiting and decides (the TypeScript SDK,
// sdk/typescript, is the client with retries and idempotency keys, for integrations).
import createClient from 'openapi-fetch';
import type { ClientPathsWithMethod, Client, MaybeOptionalInit, MethodResponse } from 'openapi-fetch';

/** What the UI says when no answer came (the network, a stopped service). */
export const UNREACHABLE = 'The service cannot be reached. Check your connection and try again.';

/** A call that got no 2xx answer. */
export class ApiError extends Error {
  /** The HTTP status; 0 when no answer came (`cause` says why). */
  readonly status: number;
  /** Seconds from a 429's or 503's Retry-After header, when it had one. */
  readonly retryAfter: number | null;
  /** The answer body's `error` string, when it had one. */
  readonly error: string | null;
  /** The answer's body as text ('' without an answer). */
  readonly body: string;
  /** `METHOD /path?query` of the call, the path as the caller named it (without the base URL). */
  readonly request: string;

  constructor(init: {
    status: number;
    message: string;
    request: string;
    retryAfter?: number | null;
    error?: string | null;
    body?: string;
    cause?: unknown;
  }) {
    super(init.message, { cause: init.cause });
    this.name = 'ApiError';
    this.status = init.status;
    this.retryAfter = init.retryAfter ?? null;
    this.error = init.error ?? null;
    this.body = init.body ?? '';
    this.request = init.request;
  }
}

export interface ApiOptions {
  /** Where the API answers; '' (the default) is the page's own origin (the dashboard). */
  baseUrl?: string;
  /**
   * Headers of a call, asked for each as it is sent (a session's CSRF token on writes, a bearer token); a
   * rejection is the call's.
   */
  headers?(method: string): Record<string, string> | Promise<Record<string, string>>;
  /** The browser's cookie policy: the dashboard sends its session cookie to its own origin only. */
  credentials?: 'omit' | 'same-origin' | 'include';
  fetch?: (request: Request) => Promise<Response>;
}

export type Method = 'get' | 'post' | 'put' | 'delete';
/** The routes of `Paths` that have method `M`. */
export type PathsWith<Paths extends object, M extends Method> = ClientPathsWithMethod<Client<Paths>, M>;
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
/** The init argument: required when the route has required parameters or a required body. */
type InitArg<I> = RequiredKeys<I> extends never ? [init?: I] : [init: I];

/** A route's call: the 2xx answer's body, typed by its schema. */
export type Call<Paths extends object, M extends Method> = <
  P extends PathsWith<Paths, M>,
  I extends MaybeOptionalInit<Paths[P], M & keyof Paths[P]>,
>(
  path: P,
  ...init: InitArg<I>
) => Promise<Answer<Paths, M, P>>;

/**
 * The body of a 2xx answer of `M P` (undefined for a route that answers 204 only), read as the routes send
 * it (Sent): their response schemas list the fields without `required` (services/api/common.ts `Obj`: the
 * handlers build every field), so the generated types would make each one optional.
 */
export type Answer<Paths extends object, M extends Method, P extends PathsWith<Paths, M>> = [
  MethodResponse<Client<Paths>, M, P>,
] extends [never]
  ? undefined
  : Sent<MethodResponse<Client<Paths>, M, P>>;

/** Every listed property present (null stays null where the schema allows it). */
export type Sent<T> = T extends (infer E)[]
  ? Sent<E>[]
  : T extends object
    ? { [K in keyof T]-?: Sent<Exclude<T[K], undefined>> }
    : T;

/** The JSON body `M P` takes. */
export type RequestBody<Paths extends object, M extends Method, P extends PathsWith<Paths, M>> = Exclude<
  NonNullable<MaybeOptionalInit<Paths[P], M & keyof Paths[P]>>['body'],
  undefined
>;

/** The query parameters `M P` takes. */
export type RequestQuery<Paths extends object, M extends Method, P extends PathsWith<Paths, M>> = NonNullable<
  MaybeOptionalInit<Paths[P], M & keyof Paths[P]>
>['params'] extends infer Q
  ? Q extends { query?: infer R }
    ? R
    : never
  : never;

export interface Api<Paths extends object> {
  GET: Call<Paths, 'get'>;
  POST: Call<Paths, 'post'>;
  PUT: Call<Paths, 'put'>;
  DELETE: Call<Paths, 'delete'>;
  /**
   * The same routes with the whole answer: `{ data, response }` (the status, the headers); `parseAs: 'text'`
   * for a file. Errors reject with ApiError as above.
   */
  raw: Client<Paths>;
}

export function createApi<Paths extends object>(options: ApiOptions = {}): Api<Paths> {
  const baseUrl = (options.baseUrl ?? '').replace(/\/+$/, '');
  const raw = createClient<Paths>({
    baseUrl,
    credentials: options.credentials,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    querySerializer: (query: Record<string, unknown>) => {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(query ?? {}))
        if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
      return q.toString();
    },
  });
  const prefix = baseUrl ? new URL(baseUrl).pathname.replace(/\/+$/, '') : '';
  const describe = (request: Request) => {
    const url = new URL(request.url);
    return `${request.method} ${url.pathname.slice(prefix.length)}${url.search}`;
  };
  raw.use({
    async onRequest({ request }) {
      for (const [k, v] of Object.entries((await options.headers?.(request.method)) ?? {}))
        request.headers.set(k, v);
      return request;
    },
    async onResponse({ request, response }) {
      if (response.ok) return response;
      const body = await response.text();
      let error: string | null = null;
      try {
        const json = JSON.parse(body) as unknown;
        if (json && typeof json === 'object' && typeof (json as { error?: unknown }).error === 'string')
          error = (json as { error: string }).error;
      } catch {
        // A proxy's HTML error page, for instance.
      }
      const retryAfter = Number(response.headers.get('retry-after'));
      throw new ApiError({
        status: response.status,
        message: error ?? `Request failed (${response.status})`,
        request: describe(request),
        retryAfter: retryAfter > 0 ? retryAfter : null,
        error,
        body,
      });
    },
    onError({ request, error }) {
      if (error instanceof ApiError) return error;
      return new ApiError({ status: 0, message: UNREACHABLE, request: describe(request), cause: error });
    },
  });

  const call =
    (method: 'GET' | 'POST' | 'PUT' | 'DELETE') =>
    async (path: string, init?: { body?: unknown }): Promise<unknown> => {
      const write = method === 'POST' || method === 'PUT';
      const { data } = await (
        raw.request as (m: string, p: string, i: object) => Promise<{ data?: unknown }>
      )(method, path, {
        ...init,
        ...(write && init?.body === undefined ? { body: {} } : {}),
        parseAs: 'text',
      });
      const text = data as string | undefined;
      if (!text) return undefined;
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return null;
      }
    };
  return {
    GET: call('GET') as Call<Paths, 'get'>,
    POST: call('POST') as Call<Paths, 'post'>,
    PUT: call('PUT') as Call<Paths, 'put'>,
    DELETE: call('DELETE') as Call<Paths, 'delete'>,
    raw,
  };
}
