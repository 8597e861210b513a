// The API service as a Fastify plugin: dashboard sessions (/api/auth), dashboard reads
// (/api/tracking/status|events|performance) and management (/api/advertiser/*), the partner API
// (/api/partner/*, partner sessions only) and the public program pages (/api/public/*). It reads Postgres
// and writes only management data. Every route but signup, login, partner sign-in and the public pages
// authenticates first (modules/auth/access.ts, modules/partner-auth/access.ts).
import type { FastifyInstance } from 'fastify';
import type { ApiDeps, AuthedRoutes } from './deps.ts';
import { authenticate } from './modules/auth/access.ts';
import { documentCrossSite, refuseCrossSiteWrites } from './cross-site.ts';
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
import { registerWebhookRoutes } from './modules/webhooks/routes.ts';
import { registerAnalyticsRoutes } from './modules/analytics/routes.ts';
import { registerMailRoutes } from './modules/mail/routes.ts';
import { registerPayoutRoutes } from './modules/payouts/routes.ts';
import { registerCodeRoutes, registerPartnerCodeRoutes } from './modules/codes/routes.ts';
import { registerRiskRoutes } from './modules/risk/routes.ts';
import { registerGroupRoutes } from './modules/groups/routes.ts';
import { registerImportRoutes } from './modules/imports/routes.ts';
import { registerTierRoutes } from './modules/tiers/routes.ts';
import { registerBonusRoutes } from './modules/bonuses/routes.ts';
import {
  registerAdvertiserNotificationRoutes,
  registerPartnerNotificationRoutes,
} from './modules/notifications/routes.ts';
import { authenticatePartner, requireVerifiedPartner } from './modules/partner-auth/access.ts';
import { registerPartnerAccountRoutes, registerPartnerAuthRoutes } from './modules/partner-auth/routes.ts';
import { registerPartnerPortalRoutes } from './modules/partner-portal/routes.ts';
import { registerPayoutMethodRoutes } from './modules/partner-portal/payout-method.ts';
import { registerApplicationRoutes } from './modules/applications/routes.ts';
import { registerPartnerClaimRoutes } from './modules/partner-claims/routes.ts';

/** Route modules whose TypeBox schemas validate (docs/api-modules.md). */
const validatedRoutes: AuthedRoutes[] = [
  registerProgramRoutes,
  registerPartnerRoutes,
  registerLinkRoutes,
  registerCommissionRoutes,
  registerRiskRoutes,
  registerProcessorRoutes,
  registerMemberRoutes,
  registerApiKeyRoutes,
  registerDashboardRoutes,
  registerWebhookRoutes,
  registerAnalyticsRoutes,
  registerMailRoutes,
  registerAdvertiserNotificationRoutes,
  registerPayoutRoutes,
  registerCodeRoutes,
  registerGroupRoutes,
  registerImportRoutes,
  registerTierRoutes,
  registerBonusRoutes,
];

/** The partner API (/api/partner/*): a partner session only (docs/partners.md). */
const partnerRoutes: AuthedRoutes[] = [
  registerPartnerAccountRoutes,
  registerPartnerClaimRoutes,
  registerPartnerPortalRoutes,
  registerPayoutMethodRoutes,
  registerPartnerNotificationRoutes,
  registerPartnerCodeRoutes,
];

export async function apiPlugin(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  app.addHook('onSend', async (_req, reply, payload) => {
    reply.header('cache-control', 'no-store');
    return payload;
  });
  // Before every scope's authentication: a session write from another origin is 403 (cross-site.ts).
  app.addHook('onRequest', refuseCrossSiteWrites(deps.publicOrigin ?? null));
  app.addHook('onRoute', documentCrossSite);
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
  // Partner sign-in (public: no session needed, and a credential of another kind is ignored, as on every
  // public route), the partner API (a psess_ session from the header or the svc_partner_session cookie),
  // and the public program pages (nothing).
  await app.register(async (partnerAuth) => {
    partnerAuth.setValidatorCompiler(typeBoxValidator);
    registerPartnerAuthRoutes(partnerAuth, deps);
  });
  await app.register(async (partner) => {
    partner.setValidatorCompiler(typeBoxValidator);
    partner.addHook('onRequest', async (req) => {
      req.partner = await authenticatePartner(deps.sql, req);
      requireVerifiedPartner(req);
    });
    for (const register of partnerRoutes) register(partner, deps);
  });
  await app.register(async (publicRoutes) => {
    publicRoutes.setValidatorCompiler(typeBoxValidator);
    registerApplicationRoutes(publicRoutes, deps);
  });
}
