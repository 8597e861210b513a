// The management modules' pure rules (service.ts files): input normalisation, defaults, the checks JSON
// Schema cannot state, status rules. No Postgres.
import t from 'tap';
import { commissionState } from '../helpers/commissions.ts';
import { HttpError } from '../../shared/http/server.ts';
import { DEFAULT_POLICY, policyError } from '../../shared/domain/commission-policy.ts';
import {
  checkStatusUnchanged,
  currencyError,
  newProgram,
  parseOrigins,
  programFields,
  rejectNulls,
  slugCandidates,
  slugify,
} from '../../services/api/modules/programs/service.ts';
import { partnerInput } from '../../services/api/modules/partners/service.ts';
import { websiteUrlError } from '../../services/api/modules/programs/service.ts';
import { CODE_RE, codeInput } from '../../services/api/modules/codes/service.ts';
import { codeDecision } from '../../services/workers/attribution/by-code.ts';
import { shortLinkCandidates } from '../../services/api/modules/links/service.ts';
import { paidEntry, payAlone } from '../../shared/commissions/states.ts';
import type { CommissionStatus } from '../../shared/commissions/states.ts';
import { connectionInput, connectionView } from '../../services/api/modules/processor/service.ts';
import { programScopeError } from '../../services/api/modules/auth/service.ts';
import { endpointInScope, programIdsPastScope } from '../../services/api/modules/webhooks/service.ts';

/** "<status> <message>" of the HttpError `fn` throws, or null when it returns. */
const errorOf = (fn: () => unknown): string | null => {
  let e: unknown = null;
  try {
    fn();
  } catch (err) {
    e = err;
  }
  if (e === null) return null;
  return e instanceof HttpError ? `${e.statusCode} ${e.message}` : String(e);
};

t.test('programs: slugs', async (t) => {
  t.equal(slugify('  Crème Brûlée Shop!! '), 'creme-brulee-shop');
  t.equal(slugify('***'), 'program', 'nothing usable');
  t.equal(slugify('x'.repeat(80)).length, 50);
  t.same(slugCandidates('mine', 'Name'), ['mine'], 'a given slug is the only candidate');
  const generated = slugCandidates(undefined, 'My Shop');
  t.equal(generated.length, 6);
  t.equal(generated[0], 'my-shop');
  for (const s of generated.slice(1)) t.match(s, /^my-shop-[0-9a-f]{6}$/);
});

t.test('programs: currency, origins and policy checks', async (t) => {
  t.equal(currencyError(' eur '), null, 'trimmed, any case');
  for (const bad of ['ABC', 'EURO', 5, null, '']) {
    t.equal(currencyError(bad), 'currency must be an ISO 4217 currency code', String(bad));
  }
  t.same(
    parseOrigins(['https://Shop.Example.com:443', 'http://localhost:3000', 'https://shop.example.com']),
    ['https://shop.example.com', 'http://localhost:3000'],
  );
  t.match(
    parseOrigins(['https://a.example', 'https://b.example/x']),
    /^allowed_origins\[1\] must be an origin/,
  );
  t.match(parseOrigins('https://a.example'), /^allowed_origins must be an array of at most 100/);
  t.equal(policyError({ type: 'flat', amount_cents: 500 }), null);
  t.equal(policyError({ type: 'flat', amount_cents: -1 }), 'amount_cents must be a non-negative integer');
  t.equal(policyError([]), 'commission must be an object');
});

t.test('programs: a validated body, normalised', async (t) => {
  t.same(
    programFields({ name: '  Shop ', currency: ' eur ', allowed_origins: ['https://A.example'], slug: null }),
    { name: 'Shop', currency: 'EUR', allowed_origins: ['https://a.example'] },
    'trimmed, upper-cased, origins normalised; null is omitted',
  );
  const created = newProgram({ name: 'Shop', cookie_window_days: null, currency: null });
  t.match(created, {
    name: 'Shop',
    cookie_window_days: 60,
    currency: 'USD',
    commission: DEFAULT_POLICY,
    allowed_origins: [],
  });
  t.equal(created.slugs[0], 'shop');
  t.same(newProgram({ name: 'X', commission: { type: 'percentage', percent: 30 } }).commission, {
    type: 'percentage',
    percent: 30,
    amount_cents: null,
    recurring: { mode: 'recurring', months: null, first: null },
    product_rules: [],
  });
  t.equal(
    errorOf(() => programFields({ commission: { type: 'percentage', percent: 101 } })),
    '400 percent must be a number from 0 to 100 (at most 4 decimals)',
    'an unvalidated policy is still refused',
  );
});

t.test('programs: update rules', async (t) => {
  t.equal(
    errorOf(() => rejectNulls({ name: null, allowed_origins: null })),
    '400 allowed_origins cannot be null',
  );
  t.equal(
    errorOf(() => rejectNulls({ name: null })),
    '400 name cannot be null',
  );
  t.equal(
    errorOf(() => rejectNulls({ status: null, name: 'A' })),
    null,
    'status is not one of them',
  );
  t.equal(
    errorOf(() => rejectNulls([null])),
    null,
    'not an object: the schema answers',
  );
  t.equal(
    errorOf(() => checkStatusUnchanged('draft', 'draft')),
    null,
  );
  t.equal(
    errorOf(() => checkStatusUnchanged(undefined, 'live')),
    null,
  );
  t.equal(
    errorOf(() => checkStatusUnchanged('live', 'draft')),
    '400 status is changed with POST /api/advertiser/affiliate-programs/:id/go-live',
  );
});

t.test('partners and links: inputs', async (t) => {
  t.same(partnerInput({ name: ' Ann ', email: ' Ann@Example.COM ' }), {
    name: 'Ann',
    email: 'ann@example.com',
    status: 'approved',
    groupId: null,
  });
  t.equal(partnerInput({ name: 'A', email: 'a@b.co', group_id: 7 }).groupId, 7, 'the group it joins');
  t.equal(partnerInput({ name: 'A', email: 'a@b.co', status: null }).status, 'approved');
  t.equal(partnerInput({ name: 'A', email: 'a@b.co', status: 'pending' }).status, 'pending');
  t.same(shortLinkCandidates('spring-sale'), ['spring-sale'], 'a wanted link is tried once');
  const generated = shortLinkCandidates(null);
  t.equal(generated.length, 5);
  for (const s of generated) t.match(s, /^[A-Za-z0-9_-]{8}$/);
});

const unheld = commissionState({ id: 7, amount_cents: 1250 });

t.test('commissions: which may be paid, and the ledger entry', async (t) => {
  // The lifecycle's rule (shared/commissions/states.ts); the API answers a refusal 409 with its reason.
  const checkPayable = (status: CommissionStatus) => {
    const d = payAlone({ ...unheld, status });
    return 'refused' in d ? `409 ${d.refused}` : null;
  };
  t.equal(checkPayable('pending'), null);
  t.equal(checkPayable('approved'), null);
  t.equal(checkPayable('paid'), '409 Commission is already paid');
  t.equal(checkPayable('reversed'), '409 A reversed commission cannot be marked paid');
  t.equal(checkPayable('refunded'), '409 A refunded commission cannot be marked paid');
  t.same(paidEntry({ id: 7, partner_id: 3, partner_program_id: 4 }, 1250), {
    topic: 'ledger',
    entry_key: 'commission:7:paid',
    kind: 'commission_paid',
    partner_id: 3,
    partner_program_id: 4,
    commission_id: 7,
    amount_cents: -1250,
    clamp_at_zero: false,
  });
});

t.test('processor connection: the body replaces the state', async (t) => {
  t.same(connectionInput({ status: 'connected', account_id: ' acct_1 ', payouts_enabled: true }), {
    status: 'connected',
    account_id: 'acct_1',
    flags: { charges_enabled: false, payouts_enabled: true, details_submitted: false },
  });
  t.equal(connectionInput({ status: 'pending', account_id: null }).account_id, null);
  t.match(connectionView(undefined), { status: 'pending', account_id: null, webhook_secret_masked: null });
});

t.test(
  'program-scoped keys: the message, and which webhook endpoints and program_ids stay inside',
  async (t) => {
    t.equal(
      programScopeError([7, 3]),
      'API key is limited to programs 3, 7',
      'ids ascending, comma and space',
    );
    t.equal(programScopeError([12]), 'API key is limited to programs 12');
    t.equal(programScopeError([10, 9, 100]), 'API key is limited to programs 9, 10, 100', 'numeric order');

    t.ok(endpointInScope(null, null), 'no scope: every endpoint');
    t.ok(endpointInScope([5], null));
    t.notOk(endpointInScope(null, [3, 7]), 'an endpoint for every program is outside any scope');
    t.ok(endpointInScope([3], [3, 7]));
    t.ok(endpointInScope(['3', '7'], [3, 7]), 'ids as Postgres returns them');
    t.notOk(endpointInScope([3, 8], [3, 7]), 'one program outside is enough');
    t.ok(endpointInScope([], [3]), 'vacuously (program_ids is never empty)');

    const past = (v: unknown) => programIdsPastScope(v, [3, 7]);
    t.ok(past(undefined), 'omitted at registration: every program');
    t.ok(past(null), 'null: every program');
    t.ok(past([3, 8]), 'another program');
    t.ok(past(['8']), 'another program, as text');
    t.notOk(past([3, '7']), 'inside');
    t.notOk(past([]), "empty: the schema's 400");
    t.notOk(past('3'), "not an array: the schema's 400");
    t.notOk(past([3, 'x']), "a malformed id: the schema's 400");
    t.ok(past(['x', 9]), 'a malformed id beside another program: 403 first');
  },
);

t.test('codes: the code, its processor ids, and what a code does to a sale (docs/codes.md)', async (t) => {
  for (const ok of ['abc', 'SUMMER_10', 'a-b', 'x'.repeat(32)]) t.ok(CODE_RE.test(ok), ok);
  for (const bad of ['ab', 'x'.repeat(33), 'a b', 'ä10', 'a.b', '']) t.notOk(CODE_RE.test(bad), bad);
  t.same(codeInput({ code: 'ABC', processor_ids: { stripe: ' promo_1 ', paddle: null, polar: '' } }), {
    code: 'ABC',
    processor_ids: { stripe: 'promo_1' },
  });
  t.same(codeInput({ code: 'ABC' }).processor_ids, {});
  const m = { id: '1', code: 'ABC', partner_id: '7', partner_program_id: '70' };
  t.equal(codeDecision(null, m, 'fallback'), 'take', 'no partner: the code takes the customer');
  t.equal(codeDecision('8', m, 'fallback'), 'none', 'fallback: another partner keeps it');
  t.equal(codeDecision('8', m, 'override'), 'take', 'override: the code takes it');
  t.equal(codeDecision('7', m, 'fallback'), 'same');
  t.equal(codeDecision('8', undefined, 'override'), 'none', 'no (active) code: nothing');
  t.equal(websiteUrlError('https://shop.example/pricing?x=1'), null);
  t.equal(websiteUrlError(' http://shop.example '), null);
  for (const bad of [
    'shop.example',
    'ftp://shop.example',
    'javascript:alert(1)',
    'https://' + 'a'.repeat(2000),
    5,
  ])
    t.ok(websiteUrlError(bad), String(bad).slice(0, 40));
});
