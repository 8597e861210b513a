#!/usr/bin/env node
// npm postinstall: applies the project's small fixes to installed dependencies, idempotently, and fails
// the install if a fix no longer applies (a dependency upgrade must then be looked at, not ignored).
// Plain JavaScript: it runs under whatever Node npm itself runs on, before the project's Node is usable.
//
// postgres 3.4.9: a write queued with setImmediate can run after the connection closed and dereference a
// null socket, an uncaught TypeError that kills the process (porsager/postgres#1154, #1208; the guard
// proposed upstream in #1209). Guarded so the pending query is rejected with CONNECTION_CLOSED instead,
// which the caller handles like any lost connection.
//
// kafkajs 2.2.4: the request queue schedules its throttle check with a negative delay when it was never
// throttled; Node 24 prints a TimeoutNegativeWarning for it on every start. Node already runs such a timer
// after 1 ms, so the fix passes 1 ms explicitly: same behaviour, no warning.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(
    'Usage: node scripts/patch-deps.mjs\n\nRun by npm after install: applies the fixes listed in this file to node_modules.',
  );
  process.exit(0);
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const fixes = [
  {
    mark: '/* svc: guarded (postgres#1208) */',
    files: ['src/connection.js', 'cjs/src/connection.js', 'cf/src/connection.js'].map((f) =>
      join(root, 'node_modules', 'postgres', f),
    ),
    find: '  function nextWrite(fn) {\n',
    replace:
      '  function nextWrite(fn) {\n' +
      '    if (!socket) { /* svc: guarded (postgres#1208) */\n' +
      '      nextWriteTimer !== null && clearImmediate(nextWriteTimer)\n' +
      '      chunk = nextWriteTimer = null\n' +
      "      error(Errors.connection('CONNECTION_CLOSED', options, socket))\n" +
      '      return false\n' +
      '    }\n',
  },
  {
    mark: '/* svc: no negative timeout */',
    files: [join(root, 'node_modules', 'kafkajs', 'src', 'network', 'requestQueue', 'index.js')],
    find: '      }, scheduleAt)\n',
    replace: '      }, Math.max(1, scheduleAt)) /* svc: no negative timeout */\n',
  },
];

let failed = false;
for (const fix of fixes) {
  for (const file of fix.files) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    if (text.includes(fix.mark)) continue;
    if (!text.includes(fix.find)) {
      console.error(`patch-deps: ${file} no longer has the code this fix expects; review the fix`);
      failed = true;
      continue;
    }
    writeFileSync(file, text.replace(fix.find, fix.replace));
  }
}
process.exit(failed ? 1 : 0);
