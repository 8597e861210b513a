// The webhook routes' TypeBox schemas and the documentation strings they share (routes.ts registers
// them): endpoints and deliveries as answered, the bodies and queries, property order being the order of
// the checks (shared/http/validation.ts).
import { Type } from '@sinclair/typebox';
import { Checked, Nullable, StringEnum } from '../../../../shared/http/validation.ts';
import { WorkspaceIdField } from '../../common.ts';
import {
  DELIVERY_STATUSES,
  ENDPOINT_STATUSES,
  ERR,
  MAX_URL,
  WEBHOOK_EVENT_TYPES,
  eventsError,
  programIdsError,
} from './service.ts';

const nullableDate = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
const endpointProperties = {
  id: Type.Integer(),
  workspace_id: Type.Integer(),
  url: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  events: Type.Array(Type.String(), { description: 'Event types it receives; ["*"] is every type' }),
  program_ids: Type.Union([Type.Array(Type.Integer()), Type.Null()], {
    description: 'Programs whose events it receives; null: every program',
  }),
  status: Type.String({ enum: [...ENDPOINT_STATUSES] }),
  disabled_reason: Type.Union([Type.String({ enum: ['manual', 'failing', 'gone'] }), Type.Null()]),
  disabled_at: nullableDate,
  failing_since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'The first failed attempt since the last successful one; null while it answers',
  }),
  previous_secret_expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'After a rotation: until when the previous secret signs too',
  }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
};
export const EndpointOut = Type.Object(endpointProperties);
export const SECRET_DOC =
  'The signing secret, `whsec_` and the base64 of 24 random bytes, for the Standard Webhooks verifier ' +
  'libraries. Shown only in this response.';
export const EndpointWithSecret = Type.Object({
  ...endpointProperties,
  secret: Type.String({ description: SECRET_DOC }),
});

export const deliveryProperties = {
  id: Type.Integer(),
  endpoint_id: Type.Integer(),
  event_id: Type.String(),
  webhook_id: Type.String({ description: 'The `webhook-id` header: the same at every attempt' }),
  type: Type.String(),
  status: Type.String({ enum: [...DELIVERY_STATUSES] }),
  attempts: Type.Integer(),
  last_status_code: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  last_response: Type.Union([Type.String(), Type.Null()], {
    description: "The last answer's body, its first 4 KB",
  }),
  next_attempt_at: nullableDate,
  created_at: Type.String({ format: 'date-time' }),
  delivered_at: nullableDate,
  payload: Type.Object(
    {},
    { additionalProperties: true, description: 'The body sent: { type, timestamp, data }' },
  ),
};
export const DeliveryOut = Type.Object(deliveryProperties);
export const AttemptOut = Type.Object({
  attempted_at: Type.String({ format: 'date-time' }),
  duration_ms: Type.Integer(),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  response: Type.Union([Type.String(), Type.Null()]),
});

// Request schemas; property order is the order of the checks (shared/http/validation.ts).
const url = Type.String({
  minLength: 1,
  maxLength: MAX_URL,
  errorMessage: ERR.url,
  description: 'https:// URL',
});
const events = Checked<string[]>(
  {
    type: 'array',
    items: { type: 'string', enum: ['*', ...WEBHOOK_EVENT_TYPES] },
    minItems: 1,
    description: 'Event types to receive; default ["*"] (every type)',
  },
  eventsError,
);
const programIds = Checked<(number | string)[] | null>(
  {
    type: ['array', 'null'],
    items: { type: 'integer', minimum: 1 },
    description: 'Programs of the workspace whose events it receives; null (default): every program',
  },
  programIdsError,
);
const description = Nullable(Type.String({ maxLength: 500 }), ERR.description);
export const EndpointCreate = Type.Object({
  workspace_id: WorkspaceIdField,
  url,
  events: Type.Optional(events),
  program_ids: Type.Optional(programIds),
  description: Type.Optional(description),
});
export const EndpointUpdate = Type.Object({
  url: Type.Optional(url),
  events: Type.Optional(events),
  program_ids: Type.Optional(programIds),
  description: Type.Optional(description),
  status: Type.Optional(StringEnum(ENDPOINT_STATUSES, ERR.status)),
});
export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });
export const DeliveryQuery = Type.Object({
  status: Type.Optional(StringEnum(DELIVERY_STATUSES, ERR.deliveryStatus)),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, errorMessage: ERR.page })),
  pageSize: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 20, errorMessage: ERR.pageSize }),
  ),
});

export const ACCESS =
  'Scope webhooks:read (reads) or webhooks:write (changes): owner and admin sessions and `*` keys; member ' +
  'and viewer roles have neither. A key limited to some programs sees only the endpoints whose ' +
  'program_ids are all its programs (others are 404). ';
export const PAST_SCOPE =
  '403 `API key is limited to programs <ids>` for a key limited to some programs when program_ids is ' +
  'null (or omitted at registration) or names another program; ';

export const URL_RULES =
  'The URL must be https:// and must not resolve to a loopback, private (RFC 1918, fc00::/7), link-local ' +
  '(169.254/16, fe80::/10), carrier-grade NAT (100.64/10), unspecified, multicast, reserved or cloud ' +
  'metadata address (the name is resolved now, and again at every delivery); with WEBHOOK_ALLOW_PRIVATE=true ' +
  '(local use) http:// and those addresses are allowed. ';
