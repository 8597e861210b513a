// CSV imports (CONTRACT part five; docs/importing.md "CSV") on the real stack: a file of partners becomes
// partners (upserted by email), their link codes, their coupon codes with the Stripe promotion code, in the
// group the row names; a bad row is an error row with its code and the rest import; the same file again
// creates nothing (twice is once); a dry run counts and writes nothing.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { createLink, startServices, testSql } from '../helpers/stack.ts';
import { signup } from '../helpers/accounts.ts';
import { apiProgram } from '../helpers/partners.ts';
import { createGroup } from '../helpers/rewards.ts';
import { TEST_IMPORT_KEY, errorsOf, finished, postCsv } from '../helpers/imports.ts';
import type { Import } from '../helpers/imports.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'outbox-relay', 'import-worker'], {
  IMPORT_SECRET_KEY: TEST_IMPORT_KEY,
  OUTBOX_POLL_MS: '50',
});
const owner = await signup(svc);
const program = await apiProgram(svc, owner);
const vip = await createGroup(svc, owner, program.id, {
  name: 'VIP',
  slug: `vip-${randomBytes(2).toString('hex')}`,
});
const tag = randomBytes(3).toString('hex');
const taken = await createLink(sql, (await apiProgram(svc, owner)).id, { shortLink: `taken${tag}` });

const csv = [
  'email,name,link,coupon_code,stripe_promotion_code,group,unknown_column',
  `Ann-${tag}@Example.com,Ann Example,ann${tag},ANN${tag},promo_ann${tag},${vip.slug},x`,
  `bob-${tag}@example.com,"Bob, Jr.",bob${tag},,,,`,
  `not-an-email,Nobody,,,,,`,
  `cy-${tag}@example.com,Cy,cy${tag},,,no-such-group,`,
  `dee-${tag}@example.com,Dee,${taken.shortLink},,,,`,
  `eve-${tag}@example.com,Eve,bad link!,X,,,`,
  '',
].join('\r\n');

async function upload(text: string, query?: string): Promise<Import> {
  const r = await postCsv(svc, owner, program.id, text, query);
  if (r.status !== 202) throw new Error(`${r.status} ${r.text}`);
  t.equal((r.body.data as Import).status, 'queued', 'answered queued');
  return finished(svc, owner, program.id, (r.body.data as Import).id);
}

t.test('a CSV file becomes partners, links and codes; bad rows are error rows', async (t) => {
  const done = await upload(csv);
  t.equal(done.status, 'completed', done.error ?? '');
  t.match(
    done.counts.partners,
    { created: 4, failed: 2 },
    'Ann, Bob, Dee, Eve in; the bad email and the unknown group out',
  );
  t.match(done.counts.links, { created: 2, failed: 3 });
  t.match(done.counts.codes, { created: 1, failed: 1 });
  const errors = await errorsOf(svc, owner, program.id, done.id);
  const codes = errors.map((e) => `${e.kind}:${e.code}`).sort();
  t.same(codes, [
    'code:invalid_code',
    'link:invalid_link_code',
    'link:link_taken',
    'link:partner_not_found',
    'partner:group_not_found',
    'partner:invalid_email',
  ]);
  const partners = await sql<{ email: string; name: string; slug: string; status: string }[]>`
    select pa.email, pa.name, g.slug, pp.status from partner_programs pp
    join partners pa on pa.id = pp.partner_id join program_groups g on g.id = pp.group_id
    where pp.program_id = ${program.id} order by pa.email`;
  t.same(
    partners.map((p) => [p.email, p.name, p.slug, p.status]),
    [
      [`ann-${tag}@example.com`, 'Ann Example', vip.slug, 'approved'],
      [`bob-${tag}@example.com`, 'Bob, Jr.', 'default', 'approved'],
      [`dee-${tag}@example.com`, 'Dee', 'default', 'approved'],
      [`eve-${tag}@example.com`, 'Eve', 'default', 'approved'],
    ],
    'emails lowercased, quoted names read, the group by slug',
  );
  const links = await sql<{ short_link: string }[]>`
    select short_link from referral_links where program_id = ${program.id} order by short_link`;
  t.same(
    links.map((l) => l.short_link),
    [`ann${tag}`, `bob${tag}`],
    'the link codes kept as they were shared',
  );
  const [code] = await sql<{ code: string; processor_ids: Record<string, string> }[]>`
    select code, processor_ids from partner_codes where program_id = ${program.id}`;
  t.same(code, { code: `ANN${tag}`, processor_ids: { stripe: `promo_ann${tag}` } });
  const [kept] = await sql`select credentials, csv from imports where id = ${done.id}`;
  t.same([kept!.credentials, kept!.csv], [null, null], 'the file is deleted when the import ends');
});

t.test('the same file again creates nothing', async (t) => {
  const before = await sql`select count(*)::int as n from partners where email like ${'%' + tag + '%'}`;
  const again = await upload(csv);
  t.equal(again.status, 'completed');
  for (const [kind, c] of Object.entries(again.counts)) t.equal(c.created, 0, `no ${kind} created`);
  t.match(again.counts.partners, { skipped: 4 }, 'the partners already imported are left as they are');
  const after = await sql`select count(*)::int as n from partners where email like ${'%' + tag + '%'}`;
  t.same(after, before);
});

t.test('a dry run counts and writes nothing', async (t) => {
  const extra = `email,name,link\r\nnew-${tag}@example.com,New,new${tag}\r\n`;
  const dry = await upload(extra, 'source=csv&dry_run=true');
  t.equal(dry.dry_run, true);
  t.match(dry.counts.partners, { created: 1 });
  t.match(dry.counts.links, { created: 1 });
  const [n] = await sql<
    { n: number }[]
  >`select count(*)::int as n from partners where email = ${`new-${tag}@example.com`}`;
  t.equal(n!.n, 0, 'no partner written');
  const [refs] = await sql<
    { n: number }[]
  >`select count(*)::int as n from import_refs where dry_run_of = ${dry.id}`;
  t.equal(refs!.n, 0, "the dry run's own records are gone once it ended");
});

t.test('bad uploads are a 400 naming what is wrong', async (t) => {
  let r = await postCsv(svc, owner, program.id, '');
  t.same([r.status, r.body], [400, { error: 'The CSV file is empty' }]);
  r = await postCsv(svc, owner, program.id, 'name,link\r\nAnn,ann\r\n');
  t.equal(r.status, 400);
  t.match(r.body.error, /header naming its columns, one of them email/);
  r = await postCsv(svc, owner, program.id, csv, 'dry_run=true');
  t.same([r.status, r.body], [400, { error: 'A text/csv body is a CSV import: add ?source=csv' }]);
});
