// The OpenAPI document states `x-decimals` as JSON Schema's multipleOf (documentDecimals, shared/http/server.ts),
// so a generated client or a fuzzer (schemathesis) sends what the validator takes; the routes' own schemas are
// left as they are (the validator never sees a float multipleOf).
import t from 'tap';
import { buildOfflineWebApp } from '../../scripts/lib/openapi.ts';
import { PolicyIn } from '../../shared/domain/policy-schema.ts';

const app = await buildOfflineWebApp({ dashboard: null });
t.teardown(() => app.close());
await app.ready();
const doc = app.swagger() as object;

const withDecimals: Record<string, unknown>[] = [];
const walk = (node: unknown): void => {
  if (Array.isArray(node)) node.forEach(walk);
  else if (node !== null && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    if (o['x-decimals'] !== undefined) withDecimals.push(o);
    Object.values(o).forEach(walk);
  }
};
walk(doc);

t.ok(withDecimals.length >= 4, `${withDecimals.length} numbers with x-decimals in the document`);
t.ok(
  withDecimals.every((o) => o.multipleOf === 0.0001 && o['x-decimals'] === 4),
  'each says multipleOf 0.0001 too',
);
t.notOk(JSON.stringify(PolicyIn).includes('multipleOf'), "the policy's own schema is unchanged");
