// Checks webhook payloads against the OpenAPI document's `webhooks` section, with Fastify's own validator
// (Ajv 8 with its formats, as for request bodies) and no coercion, defaults or removal: a payload passes only
// when it is exactly what the document says (a missing, extra or mistyped field is an error).
import Fastify from 'fastify';
import type { Teardown } from './stack.ts';

export interface WebhooksSection {
  [type: string]: {
    post: { requestBody: { content: { 'application/json': { schema: Record<string, unknown> } } } };
  };
}

/** The validator of the document's webhooks: the error of `body` as an event of `type`, or null when valid. */
export async function webhookValidator(
  t: Teardown,
  webhooks: WebhooksSection,
): Promise<(type: string, body: unknown) => Promise<string | null>> {
  const app = Fastify({
    ajv: {
      customOptions: {
        removeAdditional: false,
        coerceTypes: false,
        useDefaults: false,
        allErrors: true,
        strict: false,
      },
    },
  });
  for (const [type, item] of Object.entries(webhooks)) {
    const schema = item.post.requestBody.content['application/json'].schema;
    app.post(`/${type}`, { schema: { body: schema } }, async () => ({ ok: true }));
  }
  await app.ready();
  t.teardown(() => app.close());
  return async (type, body) => {
    if (webhooks[type] === undefined) return `no webhook ${type} in the document`;
    const r = await app.inject({ method: 'POST', url: `/${type}`, payload: body as object });
    return r.statusCode === 200 ? null : (r.json() as { message: string }).message;
  };
}
