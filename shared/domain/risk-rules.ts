// A program's risk rules (CONTRACT part three "Traffic quality and fraud"): which of the optional review
// holds it applies (shared/commissions/review-reasons.ts). `bot_traffic` is not among them: a sale through a
// bot's or a prefetch's click is always held. Pure.
export const RISK_RULES = ['disposable_email', 'shared_payout_method', 'paid_search'] as const;
export type RiskRule = (typeof RISK_RULES)[number];
export type RiskRules = Record<RiskRule, boolean>;

/** paid_search is off by default: many programs let partners bid on search ads. */
export const DEFAULT_RISK_RULES: RiskRules = Object.freeze({
  disposable_email: true,
  shared_payout_method: true,
  paid_search: false,
});

export const RISK_RULES_ERROR = `risk_rules must be an object of true or false switches: ${RISK_RULES.join(', ')}`;

/** Some of the switches (an update changes only those given), or the 400's message. */
export function parseRiskRules(v: unknown): Partial<RiskRules> | string {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return RISK_RULES_ERROR;
  const out: Partial<RiskRules> = {};
  for (const [k, on] of Object.entries(v)) {
    if (!(RISK_RULES as readonly string[]).includes(k) || typeof on !== 'boolean') return RISK_RULES_ERROR;
    out[k as RiskRule] = on;
  }
  return out;
}

export const riskRulesError = (v: unknown): string | null => {
  const r = parseRiskRules(v);
  return typeof r === 'string' ? r : null;
};

/** A stored value as the API shows it: every switch, the defaults under what was stored. */
export function riskRulesOf(stored: unknown): RiskRules {
  const r = parseRiskRules(stored ?? {});
  return { ...DEFAULT_RISK_RULES, ...(typeof r === 'string' ? {} : r) };
}

/** The schema's documentation of the field (the check is riskRulesError). */
export const RISK_RULES_DOC = {
  type: 'object',
  properties: Object.fromEntries(RISK_RULES.map((k) => [k, { type: 'boolean' }])),
  additionalProperties: false,
  description:
    'Which optional review holds apply (docs/payouts.md "Review holds"): disposable_email (default true), ' +
    'shared_payout_method (default true), paid_search (default false). On update, only the switches given ' +
    'change. A sale through a bot or prefetch click is always held (bot_traffic).',
} as const;
