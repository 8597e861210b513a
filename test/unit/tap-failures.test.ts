// FailureLog (scripts/lib/tap-failures.ts): the failures npm test repeats at its end, read from TAP as tap
// prints it (nested subtests indented by four, a YAML block after each "not ok").
import t from 'tap';
import { FailureLog } from '../../scripts/lib/tap-failures.ts';

const TAP = `# Subtest: test/unit/a.test.ts
    # Subtest: outer
        # Subtest: inner
            not ok 1 - one is two
              ---
              compare: ===
              at:
                fileName: test/unit/a.test.ts
                lineNumber: 7
              stack: |
                Test.<anonymous> (test/unit/a.test.ts:7:65)
                Test.<anonymous> (test/unit/a.test.ts:7:34)
              diff: |
                --- expected
                +++ actual
                @@ -1,1 +1,1 @@
                -2
                +1
              ...
            ok 2 - should be equal
            1..2
        not ok 1 - inner # time=34.032ms
          ---
          at:
            lineNumber: 6
          ...
    not ok 1 - outer # time=42.627ms
      ---
      ...
not ok 1 - test/unit/a.test.ts # time=64.67ms
  ---
  exitCode: 1
  ...
# Subtest: test/unit/b.test.ts
    ok 1 - fine
not ok 2 - test/unit/b.test.ts # time=9.1ms
  ---
  exitCode: null
  signal: SIGTERM
  ...
# Subtest: test/unit/c.test.ts
    ok 1 - fine
ok 3 - test/unit/c.test.ts
`;

t.test(
  'each failed assertion once, with its file, line, first frame and diff; a crashed file by itself',
  async (t) => {
    const log = new FailureLog();
    // Fed in pieces that cut lines in two, as a pipe delivers them.
    for (let i = 0; i < TAP.length; i += 37) log.feed(TAP.slice(i, i + 37));
    t.equal(
      log.summary(),
      [
        'test/unit/a.test.ts:7: one is two',
        '    at Test.<anonymous> (test/unit/a.test.ts:7:65)',
        '    -2',
        '    +1',
        'test/unit/b.test.ts',
        '    exitCode: null',
        '    signal: SIGTERM',
      ].join('\n'),
    );
  },
);

t.test('nothing failed: an empty summary', async (t) => {
  const log = new FailureLog();
  log.feed('# Subtest: test/unit/c.test.ts\n    ok 1 - fine\nok 1 - test/unit/c.test.ts\n');
  t.equal(log.summary(), '');
});
