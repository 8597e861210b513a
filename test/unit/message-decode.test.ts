// decodeMessageObject (shared/json.ts): the one decoding of a Kafka message's value that the command
// parser (shared/contracts/commands.ts) and the mail worker's parser share. Each reason a message is poison
// (dead-lettered, never retried) reaches both callers unchanged; a good object passes through.
import t from 'tap';
import { decodeMessageObject } from '../../shared/json.ts';
import { parseCommand } from '../../shared/contracts/commands.ts';
import { parseMailMessage } from '../../services/workers/mail/parse.ts';

const deep = '['.repeat(200) + ']'.repeat(200);
const poison: [Buffer | null, string][] = [
  [null, 'empty message'],
  [Buffer.alloc(0), 'empty message'],
  [Buffer.from('{"a":'), 'not JSON'],
  [Buffer.from('[1, 2]'), 'not a JSON object'],
  [Buffer.from('"text"'), 'not a JSON object'],
  [Buffer.from('null'), 'not a JSON object'],
  [Buffer.from(`{"a":${deep}}`), 'nested deeper than'],
  [Buffer.from('{"a":"\\u0000"}'), 'a string holds a NUL or an unpaired surrogate'],
  [Buffer.from('{"\\ud800":1}'), 'a string holds a NUL or an unpaired surrogate'],
];

t.test('each poison message has its reason, in both parsers', async (t) => {
  for (const [bytes, reason] of poison) {
    const label = bytes === null ? 'null' : JSON.stringify(bytes.toString('utf8').slice(0, 30));
    for (const [name, got] of [
      ['decodeMessageObject', decodeMessageObject(bytes)],
      ['parseCommand', parseCommand(bytes, 'sale')],
      ['parseMailMessage', parseMailMessage(bytes)],
    ] as const) {
      t.type(got, 'string', `${name}(${label}) is poison`);
      t.ok(String(got).startsWith(reason), `${name}(${label}): ${String(got)}`);
    }
  }
});

t.test('an object passes through as it was sent', async (t) => {
  const m = { v: 1, note: 'é ✓', nested: { list: [1, 'two', null] }, ['__proto__']: 'kept' };
  const text = JSON.stringify(m);
  const got = decodeMessageObject(Buffer.from(text));
  t.same(got, JSON.parse(text));
  t.equal(Object.getPrototypeOf(got), Object.prototype, 'a "__proto__" key does not set the prototype');
  t.equal(parseCommand(Buffer.from('{"v":2}'), 'sale'), 'unsupported version 2', 'then the command checks');
  t.equal(parseMailMessage(Buffer.from('{"id":""}')), 'bad id', 'then the mail checks');
});
