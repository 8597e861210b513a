// The API service as a Fastify plugin: dashboard sessions (/api/auth), dashboard reads
// (/api/tracking/status|events|performance) and management (/api/advertiser/*). It reads Postgres and
// writes only management data. Every route but signup and login authenticates first (modules/auth/access.ts).
import type { FastifyInstance } from 'fastify';
import type { ApiDeps, AuthedRoutes } from './deps.ts';
import { authenticate } from './modules/auth/access.ts';
import { typeBoxValidator } from '../../shared/http/validation.ts';
import { registerAuthRoutes } from './modules/auth/routes.ts';
import { registerMemberRoutes } from './modules/members/routes.ts';
import { registerApiKeyRoutes } from './modules/api-keys/routes.ts';
import { registerProgramRoutes } from './modules/programs/routes.ts';
import { registerPartnerRoutes } from './modules/partners/routes.ts';
import { registerLinkRoutes } from './modules/links/routes.ts';
import { registerCommissionRoutes } from './modules/commissions/routes.ts';
import { registerProcessorRoutes } from './modules/processor/routes.ts';
import { registerDashboardRoutes } from './modules/dashboard/routes.ts';
import { registerPayoutRoutes } from './modules/payouts/routes.ts';

/** Route modules whose TypeBox schemas validate (docs/api-modules.md). */
const validatedRoutes: AuthedRoutes[] = [
  registerProgramRoutes,
  registerPartnerRoutes,
  registerLinkRoutes,
  registerCommissionRoutes,
  registerProcessorRoutes,
  registerMemberRoutes,
  registerApiKeyRoutes,
  registerDashboardRoutes,
  registerPayoutRoutes,
];

export async function apiPlugin(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  app.addHook('onSend', async (_req, reply, payload) => {
    reply.header('cache-control', 'no-store');
    return payload;
  });
  // Signup, login and logout sit outside the authenticated scope; their schemas validate too.
  await app.register(async (auth) => {
    auth.setValidatorCompiler(typeBoxValidator);
    registerAuthRoutes(auth, deps);
  });
  await app.register(async (authed) => {
    authed.addHook('onRequest', async (req) => {
      req.principal = await authenticate(deps.sql, req);
    });
    await authed.register(async (validated) => {
      validated.setValidatorCompiler(typeBoxValidator);
      for (const register of validatedRoutes) register(validated, deps);
    });
  });
}
