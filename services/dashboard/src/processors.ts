// The payment processors as the dashboard names them. The list is the API's: the processor enum of its
// answers (shared/processors/index.ts → the OpenAPI document → sdk/typescript/src/openapi.ts), so a processor
// added there fails the dashboard's typecheck here until it has its title, and every page that lists
// processors (Settings, the group discount's ids, a partner's codes) shows it.
import type { Answer } from './api.ts';

export type ProcessorName = Answer<
  'get',
  '/api/advertiser/processor-connections'
>['data'][number]['processor'];

/** How each is written, in the API's order. */
export const PROCESSOR_TITLES: Record<ProcessorName, string> = {
  stripe: 'Stripe',
  paddle: 'Paddle',
  lemonsqueezy: 'Lemon Squeezy',
  polar: 'Polar',
};

export const PROCESSOR_NAMES = Object.keys(PROCESSOR_TITLES) as ProcessorName[];

/** Stripe has its own settings section (the processor connection); the others share one layout. */
export type OtherProcessor = Exclude<ProcessorName, 'stripe'>;
export const OTHER_PROCESSORS = PROCESSOR_NAMES.filter((p): p is OtherProcessor => p !== 'stripe');
