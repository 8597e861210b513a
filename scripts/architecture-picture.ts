// npm run docs:architecture: docs/images/architecture.svg, the picture of docs/architecture.md "Processes,
// topics and tables": which process consumes, produces to and writes what. Each process is an entry of
// scripts/lib/stack/services.ts. The topic it consumes is its runWorker definition's `topic: '<key>'`; the topics
// it produces to are PRODUCES below (the design: a handful of send sites, which a reading of the code would
// blur); the tables it writes are read from the code it runs: every file its entry reaches through relative
// imports (not type-only ones, nor those bringing only UPPER_CASE constants), comments removed, each
// `insert into` / `update` / `delete from` of a table the migrations create. A shared module reached for
// one function counts with all its statements: a mark says the process can write the table.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { cli } from './lib/cli.ts';
import { ROOT } from './lib/stack/stack.ts';
import { ENTRIES } from './lib/stack/services.ts';
import type { ServiceName } from './lib/stack/services.ts';
import { OUTBOX_TOPICS, TOPICS } from '../shared/contracts/topics.ts';
import type { TopicKey } from '../shared/contracts/topics.ts';

const { values } = cli(
  `Usage: npm run docs:architecture [-- --check]

Writes docs/images/architecture.svg: for each process (web and the workers of scripts/lib/stack/services.ts), the
Kafka topics it consumes and produces to and the Postgres tables it writes, read from the code it reaches.

  --check  write nothing; exit 1 if the committed picture differs from the code's`,
  { check: { type: 'boolean' } },
);

export const PICTURE = join(ROOT, 'docs', 'images', 'architecture.svg');

const IMPORT_RE = /(?:^|\n)\s*(?:import|export)\s(?!type\b)[^;]*?from\s+'(\.{1,2}\/[^']+)'/g;
const withoutComments = (text: string) =>
  text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

/** The names an import statement brings in, or null for `* as` and side-effect imports. */
const namesOf = (statement: string): string[] | null => {
  const braces = /\{([^}]*)\}/.exec(statement);
  if (!braces || /^\s*(?:import|export)\s+\w+\s*,/.test(statement)) return null;
  return braces[1]!
    .split(',')
    .map(
      (n) =>
        n
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)[0]!,
    )
    .filter((n) => n !== '');
};

/**
 * The files a process runs from its entry: relative imports followed, except type-only ones and those that
 * bring only constants (UPPER_CASE names: error strings, schemas), which run none of their module's code.
 */
function reached(entry: string): { file: string; text: string }[] {
  const seen = new Set<string>();
  const todo = [join(ROOT, entry)];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file) || !/\.tsx?$/.test(file)) continue;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT_RE)) {
      const names = namesOf(m[0]);
      if (names && names.length > 0 && names.every((n) => /^[A-Z][A-Z0-9_]*$/.test(n))) continue;
      todo.push(resolve(dirname(file), m[1]!));
    }
  }
  return [...seen].map((file) => ({ file, text: withoutComments(readFileSync(file, 'utf8')) }));
}

function tables(): string[] {
  const dir = join(ROOT, 'shared', 'db', 'migrations');
  const all = new Set<string>();
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.sql')))
    for (const m of readFileSync(join(dir, f), 'utf8').matchAll(
      /create table (?:if not exists )?([a-z_]+)/gi,
    ))
      all.add(m[1]!.toLowerCase());
  return [...all].sort();
}

/**
 * The topics each process produces to, as the design has it (the consumed ones are read from the code).
 * The web process: clicks and leads, the commands, Stripe's events; each command worker: its effects on
 * the ledger and notifications topics; the outbox relay: what the outbox holds; every consumer: its dead
 * letters. --check fails when a process is added without its line here.
 */
export const PRODUCES: Record<ServiceName, TopicKey[]> = {
  web: ['clicks', 'sales', 'refunds', 'processorEvents'],
  'click-worker': ['deadLetter'],
  'attribution-worker': ['ledger', 'notifications', 'deadLetter'],
  'reversal-worker': ['ledger', 'notifications', 'deadLetter'],
  'ledger-worker': ['deadLetter'],
  'notification-worker': ['deadLetter'],
  'processor-worker': ['ledger', 'notifications', 'deadLetter'],
  'outbox-relay': [...OUTBOX_TOPICS],
  'webhook-worker': ['deadLetter'],
  'mail-worker': ['deadLetter'],
  // Its next command and notifications go through the outbox (the relay produces them).
  'import-worker': ['deadLetter'],
};

export interface Process {
  name: ServiceName;
  consumes: Set<TopicKey>;
  produces: Set<TopicKey>;
  writes: Set<string>;
}

export function readProcesses(): { processes: Process[]; tables: string[] } {
  const known = tables();
  const processes = (Object.keys(ENTRIES) as ServiceName[]).map((name) => {
    const files = reached(ENTRIES[name]);
    const consumes = [...files[0]!.text.matchAll(/\btopic: '(\w+)'/g)].map((m) => m[1] as TopicKey);
    const p: Process = {
      name,
      consumes: new Set(consumes),
      produces: new Set(PRODUCES[name]),
      writes: new Set(),
    };
    for (const { text } of files)
      for (const m of text.matchAll(/\b(?:insert into|update|delete from)\s+([a-z_]+)\b/gi)) {
        const table = m[1]!.toLowerCase();
        if (known.includes(table)) p.writes.add(table);
      }
    return p;
  });
  return { processes, tables: known.filter((t) => processes.some((p) => p.writes.has(t))) };
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

export function render({ processes, tables }: ReturnType<typeof readProcesses>): string {
  const topicKeys = Object.keys(TOPICS) as TopicKey[];
  const label = 250;
  const col = 64;
  const row = 20;
  const head = 150;
  const width = label + processes.length * col + 70;
  const topicsTop = head + 30;
  const tablesTop = topicsTop + topicKeys.length * row + 40;
  const height = tablesTop + tables.length * row + 20;
  const colour = { consumes: '#1f6feb', produces: '#d9480f', writes: '#2b2b2b' };
  const x = (i: number) => label + i * col + col / 2;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans, Arial, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">svc: processes × Kafka topics × Postgres tables</text>`,
    `<text x="10" y="44" fill="${colour.consumes}">● consumes</text>`,
    `<text x="10" y="62" fill="${colour.produces}">▲ produces to</text>`,
    `<text x="10" y="80" fill="${colour.writes}">■ writes (insert, update, delete)</text>`,
    `<text x="10" y="104" fill="#666666">generated by scripts/architecture-picture.ts</text>`,
    `<text x="10" y="120" fill="#666666">from the code each process reaches</text>`,
  ];
  processes.forEach((p, i) => {
    const shade = i % 2 === 0 ? '#f3f5f8' : '#ffffff';
    out.push(
      `<rect x="${label + i * col}" y="${head - 6}" width="${col}" height="${height - head - 14}" fill="${shade}"/>`,
    );
    out.push(
      `<text transform="translate(${x(i) + 4},${head}) rotate(-50)" font-weight="bold">${esc(p.name)}</text>`,
    );
  });
  const section = (y: number, title: string) =>
    out.push(`<text x="10" y="${y - 12}" font-size="13" font-weight="bold">${title}</text>`);
  const line = (y: number) =>
    out.push(
      `<line x1="10" x2="${width - 10}" y1="${y + 5}" y2="${y + 5}" stroke="#dde1e6" stroke-width="1"/>`,
    );
  section(topicsTop, 'Kafka topics (svc.&lt;topic&gt;)');
  topicKeys.forEach((k, r) => {
    const y = topicsTop + r * row + 8;
    line(y);
    out.push(`<text x="20" y="${y}">${esc(TOPICS[k])}</text>`);
    processes.forEach((p, i) => {
      const both = p.consumes.has(k) && p.produces.has(k);
      if (p.consumes.has(k))
        out.push(`<circle cx="${x(i) - (both ? 8 : 0)}" cy="${y - 4}" r="5" fill="${colour.consumes}"/>`);
      if (p.produces.has(k)) {
        const cx = x(i) + (both ? 8 : 0);
        out.push(
          `<path d="M${cx - 6} ${y + 1} L${cx + 6} ${y + 1} L${cx} ${y - 10} Z" fill="${colour.produces}"/>`,
        );
      }
    });
  });
  section(tablesTop, 'Postgres tables written');
  tables.forEach((t, r) => {
    const y = tablesTop + r * row + 8;
    line(y);
    out.push(`<text x="20" y="${y}">${esc(t)}</text>`);
    processes.forEach((p, i) => {
      if (p.writes.has(t))
        out.push(`<rect x="${x(i) - 5}" y="${y - 9}" width="10" height="10" fill="${colour.writes}"/>`);
    });
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

const svg = render(readProcesses());
if (values.check) {
  let committed = '';
  try {
    committed = readFileSync(PICTURE, 'utf8');
  } catch {
    // missing: differs
  }
  if (committed !== svg) {
    process.stderr.write(
      'docs/images/architecture.svg differs from the code: run npm run docs:architecture\n',
    );
    process.exit(1);
  }
  process.stdout.write('docs/images/architecture.svg matches the code\n');
} else {
  writeFileSync(PICTURE, svg);
  process.stdout.write(`wrote ${PICTURE}\n`);
}
