// svc-affiliate-sdk: the TypeScript client of svc, the self-hostable affiliate tracking service.
export { Svc } from './client.ts';
export type { SvcOptions, RequestOptions } from './client.ts';
export type { CallOptions } from './transport.ts';
export type { TrackOptions } from './tracking.ts';
export { SvcError, WebhookVerificationError } from './errors.ts';
export { verifyWebhook } from './webhooks.ts';
export type {
  GroupChange,
  Lead,
  Sale,
  SaleRefunded,
  SvcWebhookEvent,
  VerifyWebhookOptions,
  WebhookEvent,
  WebhookEventData,
  WebhookEventOf,
  WebhookEventType,
  WebhookHeaders,
} from './webhooks.ts';
export { isRetryable, parseRetryAfter, retryDelay, RETRY_STATUSES } from './retry.ts';
export type { RetryMode } from './retry.ts';
export type * from './types.ts';
