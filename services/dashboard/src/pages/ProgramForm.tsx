// The program create / edit form: name, slug, cookie window, currency, the commission policy (PolicyFields:
// the one policy editor, also the groups' and a partner's own) and the partner and payout settings (their own
// files). Used by Programs.tsx.
import { useState } from 'preact/hooks';
import { ErrorBox, SubmitCancel } from '../widgets.tsx';
import { messageOf, useAction } from '../hooks.ts';
import type { Program, ProgramFields } from '../program.tsx';
import { PartnerSettingsFields, partnerSettingsBody, partnerSettingsOf } from './ProgramPartnerFields.tsx';
import { PayoutSettingsFields, payoutSettingsBody, payoutSettingsOf } from './ProgramPayoutFields.tsx';
import { PolicyFields, policyBody, policyInput } from './PolicyFields.tsx';

export function ProgramForm(props: {
  title: string;
  submit: string;
  initial?: Program;
  onSubmit(body: ProgramFields): Promise<void>;
  onCancel(): void;
}) {
  const init = props.initial;
  const [name, setName] = useState(init?.name ?? '');
  const [slug, setSlug] = useState(init?.slug ?? '');
  const [days, setDays] = useState(String(init?.cookie_window_days ?? 60));
  const [currency, setCurrency] = useState(init?.currency ?? 'USD');
  const [policy, setPolicy] = useState(policyInput(init?.commission));
  const [origins, setOrigins] = useState(init?.allowed_origins.join('\n') ?? '');
  const [partnerSettings, setPartnerSettings] = useState(partnerSettingsOf(init));
  const [payoutSettings, setPayoutSettings] = useState(payoutSettingsOf(init));
  const submit = useAction();

  const body = (): ProgramFields => {
    const d = Number(days);
    if (!Number.isInteger(d) || d < 1) throw new Error('Attribution window: enter a whole number of days');
    const commission = policyBody(policy);
    const out: ProgramFields = {
      name,
      cookie_window_days: d,
      currency: currency.trim().toUpperCase(),
      commission,
      allowed_origins: origins
        .split(/[\s,]+/)
        .map((o) => o.trim())
        .filter(Boolean),
      ...partnerSettingsBody(partnerSettings),
      ...payoutSettingsBody(payoutSettings),
    };
    if (slug.trim()) out.slug = slug.trim();
    return out;
  };

  return (
    <form
      class="panel"
      aria-label={props.title}
      onSubmit={(e) => {
        e.preventDefault();
        submit.setError(null);
        let b: ProgramFields;
        try {
          b = body();
        } catch (err) {
          submit.setError(messageOf(err));
          return;
        }
        void submit.run(() => props.onSubmit(b));
      }}
    >
      <h2>{props.title}</h2>
      <div class="grid">
        <label>
          Name
          <input
            value={name}
            required
            maxLength={200}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Slug <span class="subtle">(optional: made from the name)</span>
          <input value={slug} onInput={(e) => setSlug((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Attribution window (days)
          <input
            type="number"
            min={1}
            max={3650}
            required
            value={days}
            onInput={(e) => setDays((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Currency <span class="subtle">(ISO 4217, e.g. USD, EUR)</span>
          <input
            value={currency}
            required
            maxLength={3}
            onInput={(e) => setCurrency((e.target as HTMLInputElement).value)}
          />
        </label>
      </div>
      <PolicyFields value={policy} onChange={setPolicy} />
      <label>
        Allowed origins{' '}
        <span class="subtle">
          (one per line, e.g. https://shop.example.com; the sites the tracker runs on)
        </span>
        <textarea
          rows={3}
          value={origins}
          onInput={(e) => setOrigins((e.target as HTMLTextAreaElement).value)}
        />
      </label>
      <PartnerSettingsFields value={partnerSettings} onChange={setPartnerSettings} />
      <PayoutSettingsFields value={payoutSettings} currency={currency} onChange={setPayoutSettings} />
      <ErrorBox error={submit.error} />
      <SubmitCancel busy={submit.busy} label={props.submit} onCancel={props.onCancel} />
    </form>
  );
}
