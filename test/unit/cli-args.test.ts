import t from 'tap';
import { cli } from '../../scripts/lib/cli.ts';
import { integerIn } from '../../shared/cli-args.ts';

t.test('integerIn: an integer within the bounds, else null', async (t) => {
  t.equal(integerIn('5', 1, 10), 5);
  t.equal(integerIn(' 7 ', 1, 10), 7);
  t.equal(integerIn('-3', -Infinity, Infinity), -3);
  for (const bad of [undefined, '', '  ', 'abc', '1.5', '0', '11', '1e400']) {
    t.equal(integerIn(bad, 1, 10), null, `rejects ${JSON.stringify(bad)}`);
  }
});

t.test('cli().int reads an integer option, or its default when absent', async (t) => {
  const usage = 'Usage: x';
  const opts = { rate: { type: 'string' }, seconds: { type: 'string' } } as const;
  const { int, positionals } = cli(usage, opts, ['--rate', '40', 'file']);
  t.equal(int('rate', 1, 100), 40);
  t.equal(int('seconds', 20, 100), 20);
  t.same(positionals, ['file']);
});
