// The pure rules of partner accounts, the partner API and applications (no Postgres).
import t from 'tap';
import {
  clearedPartnerCookie,
  emailError,
  normalEmail,
  optionalPasswordError,
  partnerCookie,
  passwordError,
} from '../../services/api/modules/partner-auth/service.ts';
import {
  payoutMethodOf,
  toPartnerCommission,
  toPartnerProgram,
  withoutCustomerData,
  withoutPartnerCounts,
} from '../../services/api/modules/partner-portal/service.ts';
import { applicationNotices, websiteError } from '../../services/api/modules/applications/service.ts';
import {
  applicationClaim,
  firstMailboxProof,
  inviteAccountRule,
  maskedMethod,
} from '../../services/api/modules/partner-claims/service.ts';
import { partnerView } from '../../shared/views/partner.ts';

t.test('the partner cookie: HttpOnly, SameSite=Lax, Path=/, Secure over HTTPS; cleared', async (t) => {
  t.equal(
    partnerCookie('psess_x', 3600.7, false),
    'svc_partner_session=psess_x; HttpOnly; SameSite=Lax; Path=/; Max-Age=3600',
  );
  t.match(partnerCookie('psess_x', 10, true), /; Secure$/);
  t.equal(
    clearedPartnerCookie(false),
    'svc_partner_session=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT',
  );
});

t.test('what an invite may do to an account: it always reaches its recipient', async (t) => {
  const now = new Date();
  const account = (verified: boolean, hash: string | null) => ({
    email_verified_at: verified ? now : null,
    mailbox_verified_at: null,
    password_hash: hash,
  });
  t.same(inviteAccountRule(undefined), { kind: 'create' });
  t.same(inviteAccountRule(account(false, 'h')), { kind: 'take-over' }, 'an application form made it');
  t.same(inviteAccountRule(account(false, null)), { kind: 'take-over' });
  t.same(inviteAccountRule(account(true, 'h')), { kind: 'check-password', hash: 'h' });
  t.same(inviteAccountRule(account(true, null)), { kind: 'needs-magic-link' });
});

t.test('the first sign-in link proves the mailbox, once', async (t) => {
  t.equal(firstMailboxProof({ mailbox_verified_at: null }), true);
  t.equal(firstMailboxProof({ mailbox_verified_at: new Date() }), false);
});

t.test('what an application claims: never a record that existed, never without the mailbox', async (t) => {
  const now = new Date();
  const acc = (mailbox: boolean) => ({
    id: '7',
    email_verified_at: now,
    mailbox_verified_at: mailbox ? now : null,
  });
  const base = { recordCreated: true, signedIn: 7, alreadyClaimed: false };
  t.same(applicationClaim({ ...base, account: acc(true) }), { kind: 'claim' }, 'own session, mailbox proven');
  t.same(
    applicationClaim({ ...base, account: acc(false) }),
    { kind: 'mail-claim-link' },
    'verified by an invite only: the mailbox decides',
  );
  t.same(
    applicationClaim({ ...base, signedIn: 8, account: acc(true) }),
    { kind: 'mail-claim-link' },
    "another account's session",
  );
  t.same(applicationClaim({ ...base, signedIn: null, account: undefined }), { kind: 'mail-claim-link' });
  t.same(
    applicationClaim({ ...base, recordCreated: false, account: acc(true) }),
    { kind: 'mail-sign-in-link' },
    'an existing record is never claimed by an application',
  );
  t.same(applicationClaim({ ...base, alreadyClaimed: true, account: acc(true) }), { kind: 'nothing' });
});

t.test('the payout-method change notice masks the method', async (t) => {
  t.equal(
    maskedMethod({ type: 'paypal', email: 'pat.partner@example.com' }),
    'PayPal p**********@example.com',
  );
  t.equal(maskedMethod({ type: 'wise', email: 'a@b.co' }), 'Wise a***@b.co');
  t.equal(
    maskedMethod({ type: 'bank_transfer', details: 'DE89 3704 0044 0532 0130 00' }),
    'Bank transfer, details ending 3000',
  );
  t.equal(maskedMethod({ type: 'bank_transfer', details: 'x' }), 'Bank transfer');
});

t.test('emails and passwords', async (t) => {
  t.equal(normalEmail('  Pat@Example.COM '), 'pat@example.com');
  t.equal(emailError(' pat@example.com '), null);
  for (const bad of ['', 'pat', 'pat@', 5, null, `${'a'.repeat(320)}@example.com`]) {
    t.equal(emailError(bad), 'email must be a valid email address', String(bad).slice(0, 20));
  }
  t.equal(passwordError('0123456789'), null);
  t.equal(passwordError('012345678'), 'password must be at least 10 characters');
  t.equal(passwordError(undefined), 'password must be at least 10 characters');
  t.equal(passwordError('x'.repeat(1025)), 'password must be at most 1024 characters');
  t.equal(optionalPasswordError(undefined), null);
  t.equal(optionalPasswordError(null), null);
  t.equal(optionalPasswordError('short'), 'password must be at least 10 characters');
});

t.test('payout methods', async (t) => {
  t.same(payoutMethodOf({ type: 'paypal', email: ' Pat@Example.com ' }), {
    type: 'paypal',
    email: 'pat@example.com',
    details: null,
  });
  t.equal(
    payoutMethodOf({ type: 'wise' }),
    'email must be a valid email address (required for paypal and wise)',
  );
  t.equal(
    payoutMethodOf({ type: 'bank_transfer', details: '   ' }),
    'details must be a string of 1 to 2000 characters (required for bank_transfer)',
  );
  t.same(payoutMethodOf({ type: 'bank_transfer', details: ' IBAN ', email: '' }), {
    type: 'bank_transfer',
    email: null,
    details: 'IBAN',
  });
});

t.test("a partner's view: no customer data, no partner counts, payout terms' defaults", async (t) => {
  t.same(withoutCustomerData({ id: '1', customer_key: 'k', email: 'e', click_id: 'c', coupon_code: 'B10' }), {
    id: '1',
    click_id: 'c',
  });
  const perf = {
    data: [{ partners: 2 }, { partners: 0 }],
    metrics: { totalPartners: 2, partnersTrend: { trend: 100, trendDirection: 'up' } },
  };
  t.same(withoutPartnerCounts(perf), {
    data: [{ partners: 0 }, { partners: 0 }],
    metrics: { totalPartners: 0, partnersTrend: { trend: 0, trendDirection: 'stable' } },
  });
  const created = new Date('2026-01-02T03:04:05Z');
  const row = {
    pp_id: '7',
    partner_id: '3',
    status: 'approved' as const,
    rejection_reason: null,
    balance_cents: '1234',
    created_at: created,
    program_id: '9',
    name: 'Shop',
    slug: 'shop',
    program_status: 'live',
    description: null,
    currency: 'EUR',
    cookie_window_days: 30,
    commission: { type: 'flat', amount_cents: 500 },
    partner_links: true,
    hold_days: null,
    min_payout_cents: null,
    website_url: null,
    allowed_origins: ['https://shop.example', 'https://other.example'],
    group_id: '4',
    group_name: 'Default',
    group_slug: 'default',
    group_commission: null,
    group_locked: false,
    commission_override: null,
    tier_metric: 'sales_cents' as const,
    tier_window: 'lifetime' as const,
    tier_threshold: '100000',
    tier_value: '2500',
    tier_next_group_name: 'Gold',
  };
  // Full referral links (docs/codes.md): on website_url, else the first allowed origin, else none.
  t.match(toPartnerProgram(row).program, { website_url: null, link_base_url: 'https://shop.example' });
  t.match(toPartnerProgram({ ...row, website_url: 'https://shop.example/join' }).program, {
    website_url: 'https://shop.example/join',
    link_base_url: 'https://shop.example/join',
  });
  t.equal(toPartnerProgram({ ...row, allowed_origins: [] }).program.link_base_url, null);
  t.match(toPartnerProgram(row), {
    program: { id: 9, hold_days: 30, min_payout_cents: 0, commission: { type: 'flat', amount_cents: 500 } },
    partner_id: 3,
    balance_cents: 1234,
    created_at: '2026-01-02T03:04:05.000Z',
    commission: { type: 'flat', amount_cents: 500 },
    group: { id: 4, name: 'Default', slug: 'default' },
    tier: {
      metric: 'sales_cents',
      window: 'lifetime',
      value: 2500,
      threshold: 100000,
      next_group_name: 'Gold',
    },
  });
  // Its own policy wins, then its group's; a partner locked in its group has no next rule to reach.
  t.match(toPartnerProgram({ ...row, group_commission: { type: 'percentage', percent: 9 } }).commission, {
    percent: 9,
  });
  t.match(
    toPartnerProgram({
      ...row,
      group_commission: { type: 'percentage', percent: 9 },
      commission_override: { type: 'flat', amount_cents: 7 },
    }).commission,
    { amount_cents: 7 },
  );
  t.equal(toPartnerProgram({ ...row, group_locked: true }).tier, null);
  t.match(toPartnerProgram({ ...row, hold_days: 0, min_payout_cents: '5000' }).program, {
    hold_days: 0,
    min_payout_cents: 5000,
  });
  t.same(
    toPartnerCommission({
      id: '1',
      program_id: '9',
      status: 'pending',
      amount_cents: '300',
      deducted_cents: '0',
      currency: 'EUR',
      sale_amount_cents: '3000',
      created_at: created,
      payable_at: new Date('2026-02-01T03:04:05+00:00'),
      payout_id: null,
      coupon_code: 'SUMMER10',
      under_review: true,
      group_id: '4',
      rule: { source: 'group', type: 'percentage', percent: 10, amount_cents: null },
      bonus_id: null,
    }),
    {
      id: 1,
      program_id: 9,
      status: 'pending',
      amount_cents: 300,
      deducted_cents: 0,
      currency: 'EUR',
      sale_amount_cents: 3000,
      created_at: '2026-01-02T03:04:05.000Z',
      payable_at: '2026-02-01T03:04:05.000Z',
      coupon_code: 'SUMMER10',
      payout_id: null,
      under_review: true,
      group_id: 4,
      rule: { source: 'group', type: 'percentage', percent: 10, amount_cents: null },
      bonus_id: null,
    },
  );
});

t.test('applications: the website rule, the notices, the webhook data', async (t) => {
  for (const ok of [undefined, null, '', 'https://a.example', 'http://a.example/x?y'])
    t.equal(websiteError(ok), null);
  for (const bad of ['ftp://a.example', 'a.example', 5, `https://${'a'.repeat(500)}.example`]) {
    t.equal(
      websiteError(bad),
      'website must be an http(s) URL of at most 500 characters',
      String(bad).slice(0, 20),
    );
  }
  const notices = applicationNotices({
    ppId: '5',
    partnerId: 3,
    programId: 9,
    workspaceId: 2,
    programName: 'Shop',
    name: 'Ada',
    email: 'ada@example.com',
    approved: false,
  });
  t.same(
    notices.map((n) => [n.notification_key, n.recipient_type, n.kind, n.mail, n.workspace_id, n.partner_id]),
    [
      ['partner_applied:5', 'advertiser', 'partner_applied', true, 2, 3],
      ['application_received:5', 'partner', 'application_received', true, null, 3],
    ],
  );
  // A partner.* event's data is the partner's view (shared/views/partner.ts), as the partners API answers.
  const at = new Date('2026-01-01T00:00:00Z');
  t.same(
    partnerView({
      id: '3',
      name: 'Ada',
      email: 'ada@example.com',
      program_id: '9',
      pp_id: '5',
      status: 'pending',
      rejection_reason: null,
      source: 'application',
      application: { website: 'https://ada.example' },
      claimed: false,
      clicks: '0',
      balance_cents: '0',
      program_balance_cents: '0',
      joined_at: at,
      updated_at: at,
      group_id: '7',
      group_name: 'Default',
      group_slug: 'default',
      group_locked: false,
      commission_override: null,
    }),
    {
      id: 3,
      partner_id: 3,
      name: 'Ada',
      email: 'ada@example.com',
      program_id: 9,
      partner_program_id: 5,
      status: 'pending',
      rejection_reason: null,
      source: 'application',
      application: { website: 'https://ada.example', message: null },
      claimed: false,
      clicks: 0,
      balance_cents: 0,
      program_balance_cents: 0,
      joined_at: '2026-01-01T00:00:00.000Z',
      group: { id: 7, name: 'Default', slug: 'default' },
      group_locked: false,
      commission_override: null,
      is_test: false,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    },
  );
});

t.test('the OpenAPI document: partner routes, their security schemes and tags', async (t) => {
  const { buildWebApp } = await import('../../services/web/app.ts');
  const { createLogger } = await import('../../shared/logger.ts');
  const app = await buildWebApp({ trustProxy: false, bodyLimit: 1 << 20 }, createLogger('test', 'error'), {
    api: { sql: null as never, sessionTtlHours: 1, kafkaPrefix: 'svc.', publicUrl: 'http://127.0.0.1:8080' },
  });
  t.teardown(() => app.close());
  const doc = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
    paths: Record<string, Record<string, { security?: Record<string, string[]>[]; tags?: string[] }>>;
    components: { securitySchemes: Record<string, { type: string; in?: string; name?: string }> };
  };
  t.match(doc.components.securitySchemes, {
    partnerSession: { type: 'http' },
    partnerSessionCookie: { type: 'apiKey', in: 'cookie', name: 'svc_partner_session' },
  });
  for (const [path, method] of [
    ['/api/partner/me', 'get'],
    ['/api/partner/programs/{programId}/performance', 'get'],
    ['/api/partner/notifications/{id}/read', 'post'],
    ['/api/partner/commissions', 'get'],
  ] as const) {
    const op = doc.paths[path]?.[method];
    t.same(op?.security, [{ partnerSession: [] }, { partnerSessionCookie: [] }], `${method} ${path}`);
    t.same(op?.tags, ['partner']);
  }
  t.ok(doc.paths['/api/partner/auth/login']?.post, 'sign-in');
  t.ok(doc.paths['/api/public/programs/{slug}/apply']?.post, 'apply');
  t.ok(doc.paths['/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/approve']?.post, 'approve');
  t.ok(doc.paths['/api/advertiser/notifications']?.get, 'the bell');
});
