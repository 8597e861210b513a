// Partner codes' API (CONTRACT part three "Codes as well as links"; docs/codes.md) on the real stack: create
// (201 shape, 409 `Code already taken` regardless of case and after deactivation, every 400, 404s), the lists
// per partner and per program, deactivation, the partner's own list, and the programs' website_url and
// code_attribution (create, update, read; the partner API's programs answer carries website_url).
import t from 'tap';
import { startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { addPartner, apiProgram, invitedPartner } from '../helpers/partners.ts';
import { ERR } from '../../services/api/modules/codes/service.ts';
import { ERR as PROGRAM_ERR } from '../../services/api/modules/programs/service.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const url = (p: string) => `${svc.baseUrl}${p}`;

const owner = await signup(svc);
const own = bearer(owner.session);
const program = await apiProgram(svc, owner, { allowed_origins: ['https://shop.example'] });
const other = await apiProgram(svc, owner);
const P = await invitedPartner(svc, owner, program.id);
const Q = await addPartner(svc, owner, program.id);
const base = `/api/advertiser/affiliate-programs/${program.id}`;
const create = (partnerId: number, body: unknown) =>
  send('POST', url(`${base}/partners/${partnerId}/codes`), body, own);

type Code = { id: number; code: string; partner_id: number; program_id: number; status: string };

t.test('create: 201 with the code, unique per program regardless of case', async (t) => {
  const r = await create(P.partnerId, {
    code: 'Summer_10-A',
    processor_ids: { stripe: ' promo_123 ', polar: null },
  });
  t.equal(r.status, 201, r.text);
  const d = r.body.data as Code & { processor_ids: unknown; created_at: string };
  t.match(d, {
    code: 'Summer_10-A',
    partner_id: P.partnerId,
    program_id: program.id,
    processor_ids: { stripe: 'promo_123' },
    status: 'active',
  });
  t.same(Object.keys(d.processor_ids as object), ['stripe'], 'null and empty ids are left out');
  t.ok(Number.isInteger(d.id) && !Number.isNaN(Date.parse(d.created_at)));

  for (const [partnerId, code] of [
    [P.partnerId, 'SUMMER_10-A'],
    [Q.partnerId, 'summer_10-a'],
  ] as const) {
    const again = await create(partnerId, { code });
    t.equal(again.status, 409, `${code} for partner ${partnerId}`);
    t.same(again.body, { error: 'Code already taken' });
  }
  // Another program may use the same code.
  const q2 = await addPartner(svc, owner, other.id);
  const elsewhere = await send(
    'POST',
    url(`/api/advertiser/affiliate-programs/${other.id}/partners/${q2.partnerId}/codes`),
    { code: 'summer_10-a' },
    own,
  );
  t.equal(elsewhere.status, 201, elsewhere.text);
});

t.test('create: every 400 and 404', async (t) => {
  const bad: [unknown, string][] = [
    [{}, ERR.code],
    [{ code: 'ab' }, ERR.code],
    [{ code: 'a'.repeat(33) }, ERR.code],
    [{ code: 'has space' }, ERR.code],
    [{ code: 'ümlaut' }, ERR.code],
    [{ code: 12345 }, ERR.code],
    [{ code: 'GOOD1', processor_ids: 'promo_1' }, ERR.processorIds],
    [{ code: 'GOOD1', processor_ids: { stripe: 5 } }, ERR.processorIds],
    [{ code: 'GOOD1', processor_ids: { stripe: '' } }, ERR.processorIds],
    [{ code: 'GOOD1', processor_ids: { shopify: 'x' } }, ERR.processorIds],
  ];
  for (const [body, error] of bad) {
    const r = await create(P.partnerId, body);
    t.same([r.status, r.body], [400, { error }], JSON.stringify(body));
  }
  const notBody = await send('POST', url(`${base}/partners/${P.partnerId}/codes`), undefined, own);
  t.equal(notBody.status, 400);
  const stranger = await addPartner(svc, owner, other.id);
  const r = await create(stranger.partnerId, { code: 'NOTHERE' });
  t.same([r.status, r.body], [404, { error: ERR.partnerNotInProgram }]);
  const missing = await create(999_999_999, { code: 'NOTHERE' });
  t.equal(missing.status, 404);
  const foreign = await signup(svc);
  const r2 = await send(
    'POST',
    url(`${base}/partners/${P.partnerId}/codes`),
    { code: 'NOTHERE' },
    bearer(foreign.session),
  );
  t.same([r2.status, r2.body], [404, { error: 'Program not found' }]);
});

t.test('lists, deactivation, and the partner sees only its own codes', async (t) => {
  const q1 = (await create(Q.partnerId, { code: 'QCODE1' })).body.data as Code;
  const q2 = (await create(Q.partnerId, { code: 'QCODE2' })).body.data as Code;
  const ofQ = await getJson(url(`${base}/partners/${Q.partnerId}/codes`), own);
  t.same(
    (ofQ.body.data as Code[]).map((c) => c.code),
    ['QCODE1', 'QCODE2'],
  );
  const all = await getJson(url(`${base}/codes`), own);
  t.same(
    (all.body.data as Code[]).map((c) => c.code),
    ['Summer_10-A', 'QCODE1', 'QCODE2'],
    'the program only (not the other program’s code), oldest first',
  );

  const off = await send('DELETE', url(`${base}/codes/${q1.id}`), undefined, own);
  t.equal(off.status, 200, off.text);
  t.match(off.body.data, { id: q1.id, status: 'inactive' });
  const twice = await send('DELETE', url(`${base}/codes/${q1.id}`), undefined, own);
  t.match(
    [twice.status, twice.body.data],
    [200, { status: 'inactive' }],
    'deactivating again changes nothing',
  );
  const retaken = await create(P.partnerId, { code: 'qcode1' });
  t.same(
    [retaken.status, retaken.body],
    [409, { error: 'Code already taken' }],
    'a deactivated code keeps its name',
  );
  t.same(
    [(await send('DELETE', url(`${base}/codes/999999999`), undefined, own)).body],
    [{ error: ERR.notFound }],
  );
  // A code of another program is not found through this one.
  const otherCodes = await getJson(url(`/api/advertiser/affiliate-programs/${other.id}/codes`), own);
  const otherId = (otherCodes.body.data as Code[])[0]!.id;
  const cross = await send('DELETE', url(`${base}/codes/${otherId}`), undefined, own);
  t.same([cross.status, cross.body], [404, { error: ERR.notFound }]);
  t.same([(await getJson(url(`${base}/partners/999999999/codes`), own)).status], [404]);

  const mine = await getJson(url(`/api/partner/programs/${program.id}/codes`), bearer(P.session));
  t.equal(mine.status, 200, mine.text);
  t.same(
    (mine.body.data as Code[]).map((c) => [c.code, c.status]),
    [['Summer_10-A', 'active']],
    'P sees its code, not Q’s',
  );
  t.notOk('processor_ids' in (mine.body.data as object[])[0]!, 'no processor ids for the partner');
  const foreign = await getJson(url(`/api/partner/programs/${other.id}/codes`), bearer(P.session));
  t.same([foreign.status, foreign.body], [404, { error: 'Program not found' }]);
  t.equal(q2.status, 'active');
});

t.test('programs: website_url and code_attribution', async (t) => {
  const made = await send(
    'POST',
    url(`/api/advertiser/affiliate-programs?workspace_id=${owner.workspaceId}`),
    { name: 'Codes program', website_url: ' https://shop.example/pricing ', code_attribution: 'override' },
    own,
  );
  t.equal(made.status, 201, made.text);
  t.match(made.body.data, { website_url: 'https://shop.example/pricing', code_attribution: 'override' });
  const id = (made.body.data as { id: number }).id;
  const plain = await getJson(url(base), own);
  t.match(plain.body.data, { website_url: null, code_attribution: 'fallback' }, 'the defaults');

  for (const [body, error] of [
    [{ website_url: 'ftp://shop.example' }, PROGRAM_ERR.websiteUrl],
    [{ website_url: 'not a url' }, PROGRAM_ERR.websiteUrl],
    [{ website_url: 7 }, PROGRAM_ERR.websiteUrl],
    [{ code_attribution: 'sometimes' }, PROGRAM_ERR.codeAttribution],
    [{ code_attribution: null }, 'code_attribution cannot be null'],
  ] as const) {
    const r = await send('PUT', url(`/api/advertiser/affiliate-programs/${id}`), body, own);
    t.same([r.status, r.body], [400, { error }], JSON.stringify(body));
  }
  const createBad = await send(
    'POST',
    url(`/api/advertiser/affiliate-programs?workspace_id=${owner.workspaceId}`),
    { name: 'x', code_attribution: 'always' },
    own,
  );
  t.same(createBad.body, { error: PROGRAM_ERR.codeAttribution });

  const changed = await send(
    'PUT',
    url(`/api/advertiser/affiliate-programs/${id}`),
    { code_attribution: 'fallback', website_url: null },
    own,
  );
  t.match(changed.body.data, { website_url: null, code_attribution: 'fallback' }, 'null clears website_url');
  const [row] = await sql<
    { code_attribution: string }[]
  >`select code_attribution from programs where id = ${id}`;
  t.equal(row!.code_attribution, 'fallback');

  // The partner API's programs answer: website_url, and where full links point.
  const before = await getJson(url('/api/partner/programs'), bearer(P.session));
  const mine = (before.body.data as { program: { id: number } }[]).find((p) => p.program.id === program.id)!;
  t.match(mine.program, { website_url: null, link_base_url: 'https://shop.example' });
  await send('PUT', url(base), { website_url: 'https://shop.example/join' }, own);
  const after = await getJson(url('/api/partner/programs'), bearer(P.session));
  const now = (after.body.data as { program: { id: number } }[]).find((p) => p.program.id === program.id)!;
  t.match(now.program, {
    website_url: 'https://shop.example/join',
    link_base_url: 'https://shop.example/join',
  });
});

t.test('a processor id stands for one code of the program, a deactivated one included', async (t) => {
  const third = await apiProgram(svc, owner);
  const A = await addPartner(svc, owner, third.id);
  const B = await addPartner(svc, owner, third.id);
  const make = (partnerId: number, body: unknown) =>
    send(
      'POST',
      url(`/api/advertiser/affiliate-programs/${third.id}/partners/${partnerId}/codes`),
      body,
      own,
    );
  const first = await make(A.partnerId, { code: 'ACODE', processor_ids: { stripe: 'promo_shared' } });
  t.equal(first.status, 201, first.text);

  const taken = { error: ERR.processorIdTaken('stripe', 'ACODE') };
  const again = await make(B.partnerId, {
    code: 'BCODE',
    processor_ids: { paddle: 'dsc_1', stripe: 'promo_shared' },
  });
  t.same([again.status, again.body], [409, taken], "another partner's code cannot take the same Stripe id");
  t.same(
    (await make(B.partnerId, { code: 'acode', processor_ids: { stripe: 'promo_shared' } })).body,
    { error: ERR.taken },
    'a taken name is said first',
  );
  const otherCase = await make(B.partnerId, {
    code: 'BCODE',
    processor_ids: { stripe: 'PROMO_SHARED', paddle: 'dsc_1' },
  });
  t.equal(otherCase.status, 201, 'processor ids are compared exactly: another id');
  const paddleTaken = await make(A.partnerId, { code: 'ACODE2', processor_ids: { paddle: 'dsc_1' } });
  t.same(paddleTaken.body, { error: ERR.processorIdTaken('paddle', 'BCODE') });

  const firstId = (first.body.data as Code).id;
  t.equal(
    (
      await send(
        'DELETE',
        url(`/api/advertiser/affiliate-programs/${third.id}/codes/${firstId}`),
        undefined,
        own,
      )
    ).status,
    200,
  );
  const afterOff = await make(B.partnerId, { code: 'BCODE3', processor_ids: { stripe: 'promo_shared' } });
  t.same([afterOff.status, afterOff.body], [409, taken], 'a deactivated code keeps its processor id');

  // Another program may use the same id; two creations racing for one id: one wins, the other is told.
  const fourth = await apiProgram(svc, owner);
  const C = await addPartner(svc, owner, fourth.id);
  const D = await addPartner(svc, owner, fourth.id);
  const race = await Promise.all(
    [
      [C.partnerId, 'RACE_C'],
      [D.partnerId, 'RACE_D'],
    ].map(([partnerId, code]) =>
      send(
        'POST',
        url(`/api/advertiser/affiliate-programs/${fourth.id}/partners/${partnerId}/codes`),
        { code, processor_ids: { polar: 'promo_shared' } },
        own,
      ),
    ),
  );
  t.same(race.map((r) => r.status).sort(), [201, 409], 'of two creations racing, one wins');
  const winner = (race.find((r) => r.status === 201)!.body.data as Code).code;
  t.same(race.find((r) => r.status === 409)!.body, { error: ERR.processorIdTaken('polar', winner) });
  const listed = await getJson(url(`/api/advertiser/affiliate-programs/${fourth.id}/codes`), own);
  t.same(
    (listed.body.data as Code[]).map((c) => c.code),
    [winner],
    'only the winner is stored',
  );
});
