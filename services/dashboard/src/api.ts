// The dashboard's and the portal's only way to the API: the one typed client (shared/http/client.ts) over
// the OpenAPI paths. The session is an HttpOnly cookie the browser sends by itself (same origin);
// state-changing calls carry the CSRF token the session endpoint returned. Response types come from the
// route schemas: `Answer<'get', '/api/partner/programs'>` is what that route answers.
import { createApi } from '../../../shared/http/client.ts';
import type {
  Answer as AnswerOf,
  Method,
  PathsWith,
  RequestBody as BodyOf,
  RequestQuery as QueryOf,
} from '../../../shared/http/client.ts';
import type { paths } from '../../../sdk/typescript/src/openapi.ts';
import type { CommissionPolicy } from '../../../shared/contracts/management.ts';

export { ApiError } from '../../../shared/http/client.ts';

let csrfToken: string | null = null;
/** Set by the session code after log in, sign up and on boot (GET /api/auth/session). */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export const api = createApi<paths>({
  credentials: 'same-origin',
  headers: (method): Record<string, string> =>
    method !== 'GET' && csrfToken
      ? { accept: 'application/json', 'x-csrf-token': csrfToken }
      : { accept: 'application/json' },
});

/** The body of a 2xx answer of a route, as its schema says: `Answer<'get', '/api/partner/programs'>`. */
export type Answer<M extends Method, P extends PathsWith<paths, M>> = AnswerOf<paths, M, P>;

/** The JSON body a route takes. */
export type RequestBody<M extends Method, P extends PathsWith<paths, M>> = BodyOf<paths, M, P>;

/** The query parameters a route takes. */
export type RequestQuery<M extends Method, P extends PathsWith<paths, M>> = QueryOf<paths, M, P>;

/**
 * The OpenAPI document itself (GET /api/v1/openapi.json, which is not one of its own paths), for the API
 * reference page; errors as every call's.
 */
export async function openApiDocument(): Promise<unknown> {
  const get = api.raw.GET as unknown as (path: string) => Promise<{ data?: unknown }>;
  return (await get('/api/v1/openapi.json')).data;
}

/**
 * An answer with a program's `commission`: its response schemas describe it only as an object; its shape is
 * the domain's policy type (shared/contracts/management.ts).
 */
export type WithPolicy<T extends { commission: unknown }> = Omit<T, 'commission'> & {
  commission: CommissionPolicy;
};
/** `p` with its commission read as the policy it is (WithPolicy). */
export const withPolicy = <T extends { commission: unknown }>(p: T) => p as unknown as WithPolicy<T>;
