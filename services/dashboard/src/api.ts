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
 * A commission policy as every answer shows it: the route schemas carry the policy's one schema
 * (shared/domain/policy-schema.ts), so its type is the generated one.
 */
export type CommissionPolicy = Answer<'get', '/api/advertiser/affiliate-programs/{id}'>['data']['commission'];
/** A rate of a policy (the policy itself, a product rule). */
export type Rate = Pick<CommissionPolicy, 'type' | 'percent' | 'amount_cents'>;
