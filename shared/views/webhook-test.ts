// What `webhook.test` carries (POST /api/advertiser/webhooks/:id/test): what the receiver can check it got.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Time, UPDATED_AT, View } from './common.ts';

export const WebhookTestView = View(
  {
    endpoint_id: Type.Integer({ description: 'The endpoint the test was sent to (it alone receives it)' }),
    message: Type.String(),
    is_test: Type.Literal(true),
    created_at: Time(),
    updated_at: UPDATED_AT,
  },
  'A test event: webhook.test',
);
export type WebhookTest = Static<typeof WebhookTestView>;

export function webhookTestView(endpointId: number, now = new Date()): WebhookTest {
  const at = now.toISOString();
  return {
    endpoint_id: endpointId,
    message: 'A test event from svc: this endpoint receives and can verify its webhooks.',
    is_test: true,
    created_at: at,
    updated_at: at,
  };
}
