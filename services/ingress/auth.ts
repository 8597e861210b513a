// Tracking-token authentication (spec 5): `Authorization: Bearer aff_<token>`, matched by SHA-256 hash
// through the tracking cache. Another bearer kind (`affk_`, `sess_`) on a tracking route is a 401.
import type { FastifyRequest } from 'fastify';
import { HttpError } from '../../shared/http/server.ts';
import { hashSecret } from '../../shared/domain/secrets.ts';
import type { TrackingCache } from './tracking-cache.ts';

export type TokenState =
  { kind: 'absent' } | { kind: 'invalid'; reason: string } | { kind: 'valid'; programId: number };

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The tracking token this request authenticated with (its program and SHA-256, hex), as the cache
     * knows it. The cache may be a poll behind a regeneration: commands carry the hash, and the worker
     * refuses one whose program's token has changed since (spec 4.8, docs/ingress.md).
     */
    trackingToken?: { programId: number; hash: string };
  }
}

export async function readTrackingToken(req: FastifyRequest, cache: TrackingCache): Promise<TokenState> {
  const header = req.headers.authorization;
  if (header === undefined) return { kind: 'absent' };
  if (!header.startsWith('Bearer '))
    return { kind: 'invalid', reason: 'Authorization must be "Bearer <tracking token>"' };
  const token = header.slice(7).trim();
  if (token === '') return { kind: 'invalid', reason: 'Tracking token is empty' };
  if (!token.startsWith('aff_') || token.length > 200)
    return { kind: 'invalid', reason: 'Invalid tracking token' };
  const hash = hashSecret(token);
  const programId = await cache.programIdForToken(hash);
  if (programId === null) return { kind: 'invalid', reason: 'Invalid tracking token' };
  req.trackingToken = { programId, hash: hash.toString('hex') };
  return { kind: 'valid', programId };
}

/** Sale, refund and the CLI status need a valid token: anything else is a 401. */
export async function requireTrackingToken(req: FastifyRequest, cache: TrackingCache): Promise<number> {
  const state = await readTrackingToken(req, cache);
  if (state.kind === 'valid') return state.programId;
  throw new HttpError(
    401,
    state.kind === 'absent' ? 'Authorization header with a tracking token is required' : state.reason,
  );
}
