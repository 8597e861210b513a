// The schema validator and its one error formatter (shared/http/validation.ts), on a small Fastify app:
// no Postgres. The exact strings are the ones integrators match on.
import t from 'tap';
import Fastify from 'fastify';
import { Type } from '@sinclair/typebox';
import { installJsonHandling } from '../../shared/http/server.ts';
import {
  Checked,
  Data,
  Nullable,
  StringEnum,
  Trimmed,
  typeBoxValidator,
} from '../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../shared/http/validation.ts';

const Body = Type.Object({
  name: Trimmed(200, { errorMessage: 'name is required and must be 1 to 200 characters' }),
  status: Type.Optional(Nullable(StringEnum(['a', 'b'] as const, 'status must be a or b'), 'unused')),
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, errorMessage: 'count must be 1 to 10' })),
  tags: Type.Optional(
    Checked<string[]>({ type: 'array', items: { type: 'string' } }, (v) =>
      Array.isArray(v)
        ? v.every((x) => typeof x === 'string')
          ? null
          : 'tags must be strings'
        : 'tags must be an array',
    ),
  ),
  flag: Type.Optional(Nullable(Type.Boolean(), 'flag must be a boolean')),
});
const Query = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1000, errorMessage: 'limit must be an integer from 1 to 1000' }),
  ),
});

async function build() {
  const app = Fastify();
  installJsonHandling(app);
  app.setValidatorCompiler(typeBoxValidator);
  const typed = app.withTypeProvider<TypeBoxProvider>();
  typed.post(
    '/things/:id',
    {
      schema: {
        params: Type.Object({ id: Type.Integer() }),
        body: Body,
        response: { 200: Data(Type.Any()) },
      },
    },
    async (req) => ({
      data: { id: Number.isNaN(req.params.id) ? 'NaN' : req.params.id, body: req.body },
    }),
  );
  typed.get('/things', { schema: { querystring: Query } }, async (req) => ({
    limit: req.query.limit ?? null,
  }));
  await app.ready();
  return app;
}

t.test('a schema violation is 400 { error } with the message of the failing field', async (t) => {
  const app = await build();
  t.teardown(() => app.close());
  const post = async (payload: unknown) => {
    const r = await app.inject({
      method: 'POST',
      url: '/things/1',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(payload),
    });
    return { status: r.statusCode, body: r.json() };
  };
  const nameError = { error: 'name is required and must be 1 to 200 characters' };
  t.same(await post({}), { status: 400, body: nameError }, 'a missing required field');
  t.same(await post({ name: 5 }), { status: 400, body: nameError }, 'a wrong type');
  t.same(await post({ name: '   ' }), { status: 400, body: nameError }, 'white space only');
  t.same(await post({ name: 'x'.repeat(201) }), { status: 400, body: nameError }, 'too long');
  t.equal((await post({ name: `  ${'x'.repeat(200)}  ` })).status, 200, '200 characters once trimmed');
  t.same((await post({ name: 'A', status: 'c' })).body, { error: 'status must be a or b' }, 'enum');
  t.equal((await post({ name: 'A', status: null })).status, 200, 'Nullable takes null');
  t.same((await post({ name: 'A', count: 11 })).body, { error: 'count must be 1 to 10' });
  t.same((await post({ name: 'A', count: 1.5 })).body, { error: 'count must be 1 to 10' });
  t.same((await post({ name: 'A', tags: 'x' })).body, { error: 'tags must be an array' }, 'Checked');
  t.same((await post({ name: 'A', tags: [1] })).body, { error: 'tags must be strings' });
  t.same((await post({ name: 'A', flag: 'yes' })).body, { error: 'flag must be a boolean' });
  // Precedence is the schema's property order, whatever the body's order or the kind of failure.
  t.same((await post({ flag: 1, count: 0, name: '' })).body, nameError, 'the first field in schema order');
  t.same((await post({ flag: 1, count: 0, name: 'A' })).body, { error: 'count must be 1 to 10' });
  t.same((await post([1])).body, { error: 'Request body must be a JSON object' }, 'not an object');
  t.same((await post('x')).body, { error: 'Request body must be a JSON object' });
  t.match(
    (await post({ name: 'A', extra: 1 })).body,
    { data: { body: { name: 'A', extra: 1 } } },
    'unknown fields pass',
  );
});

t.test('no body is {}; path ids and query numbers are converted, never a 400', async (t) => {
  const app = await build();
  t.teardown(() => app.close());
  const empty = await app.inject({ method: 'POST', url: '/things/1' });
  t.same(empty.json(), { error: 'name is required and must be 1 to 200 characters' });
  const bad = await app.inject({ method: 'POST', url: '/things/abc', payload: { name: 'A' } });
  t.same(bad.json().data.id, 'NaN', 'a malformed path id reaches the handler as NaN (the access check 404s)');
  const good = await app.inject({ method: 'POST', url: '/things/42', payload: { name: 'A' } });
  t.equal(good.json().data.id, 42);
  const q = async (s: string) => (await app.inject({ method: 'GET', url: `/things?${s}` })).json();
  t.same(await q('limit=5'), { limit: 5 });
  t.same(await q(''), { limit: null });
  for (const s of [
    'limit=0',
    'limit=1001',
    'limit=x',
    'limit=-1',
    'limit=1e2',
    'limit=2.0',
    'limit=1&limit=2',
  ]) {
    t.same(await q(s), { error: 'limit must be an integer from 1 to 1000' }, s);
  }
});
