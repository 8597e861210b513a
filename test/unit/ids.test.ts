import t from 'tap';
import {
  EPOCH_MS,
  MAX_NODE,
  Snowflake,
  formatClickId,
  parseClickId,
  snowflakeTime,
} from '../../shared/domain/ids.ts';

t.test('click ids have the spec shape cust_<number>_<number> and round-trip', async (t) => {
  const sf = new Snowflake(7);
  const { id } = sf.next();
  const clickId = formatClickId(42, id);
  t.match(clickId, /^cust_\d+_\d+$/);
  t.same(parseClickId(clickId), { partnerProgramId: '42', id: id.toString() });
});

t.test('parseClickId refuses what is not ours', async (t) => {
  for (const bad of [
    '',
    'cust_',
    'cust_1',
    'cust_a_1',
    'cust_1_b',
    'cust_0_5',
    'cust_1_01',
    'xcust_1_2',
    'cust_1_2 ',
    42,
    null,
  ]) {
    t.equal(parseClickId(bad), null, `refuses ${JSON.stringify(bad)}`);
  }
  t.equal(parseClickId('cust_1_99999999999999999999'), null, 'a second number beyond 19 digits is refused');
});

t.test(
  'ids from one generator are unique and strictly increasing, even past 1,024 per millisecond',
  async (t) => {
    let now = Date.UTC(2026, 0, 1);
    const sf = new Snowflake(1, () => now);
    const seen = new Set<bigint>();
    let prev = -1n;
    let outOfOrder = 0;
    for (let i = 0; i < 5000; i++) {
      if (i % 3000 === 2999) now += 1;
      const { id } = sf.next();
      if (id <= prev) outOfOrder++;
      prev = id;
      seen.add(id);
    }
    t.equal(outOfOrder, 0);
    t.equal(seen.size, 5000);
  },
);

t.test('two generators with different node ids never collide, even in the same millisecond', async (t) => {
  const now = () => Date.UTC(2026, 5, 1);
  const a = new Snowflake(1, now);
  const b = new Snowflake(2, now);
  const ids = new Set<bigint>();
  for (let i = 0; i < 2000; i++) {
    ids.add(a.next().id);
    ids.add(b.next().id);
  }
  t.equal(ids.size, 4000);
});

t.test('the id encodes its millisecond; a clock that steps back does not break monotonicity', async (t) => {
  let now = Date.UTC(2026, 10, 22, 10, 0, 0);
  const sf = new Snowflake(MAX_NODE, () => now);
  const first = sf.next();
  t.equal(snowflakeTime(first.id), now);
  t.equal(first.ms, now);
  now -= 5000;
  const second = sf.next();
  t.ok(second.id > first.id);
  t.ok(first.id < 2n ** 63n, 'fits a Postgres bigint');
  t.ok(snowflakeTime(first.id) > EPOCH_MS);
});

t.test('node ids outside 0..4095 are refused', async (t) => {
  t.throws(() => new Snowflake(-1));
  t.throws(() => new Snowflake(MAX_NODE + 1));
  t.throws(() => new Snowflake(1.5));
});
