// A partner's codes in the program (docs/codes.md), under its links on the Partners page: each code with a
// Copy button, create one (with the processors' discount ids it stands for), deactivate one.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { Answer } from '../api.ts';
import { useSession } from '../session.tsx';
import { CopyButton } from '../copy.tsx';
import { ErrorBox, Loading } from '../widgets.tsx';
import { dateTime } from '../format.ts';
import { useAction, useLoad } from '../hooks.ts';
import { PROCESSOR_NAMES, PROCESSOR_TITLES } from '../processors.ts';

type Partner = Answer<'get', '/api/advertiser/affiliate-programs/{id}/partners'>['data'][number];
type Code = Answer<
  'get',
  '/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/codes'
>['data'][number];

/**
 * The discount ids a code stands for, one per processor whose sale events carry one (Lemon Squeezy's carry
 * none: its sales name a code by svc_coupon_code only).
 */
const PROCESSORS = PROCESSOR_NAMES.filter((p) => p !== 'lemonsqueezy').map((key) => ({
  key,
  label: key === 'stripe' ? 'Stripe promotion code id' : `${PROCESSOR_TITLES[key]} discount id`,
}));

export function PartnerCodes(props: { programId: number; partner: Partner }) {
  const { canWrite } = useSession();
  const path = { path: { id: props.programId, partnerId: props.partner.id } };
  const codes = useLoad(
    async () =>
      (await api.GET('/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/codes', { params: path }))
        .data,
    [props.programId, props.partner.id],
  );
  const [code, setCode] = useState('');
  const [ids, setIds] = useState<Record<string, string>>({});
  const create = useAction();
  const off = useAction();

  const deactivate = (c: Code) =>
    void off
      .run(async () => {
        await api.DELETE('/api/advertiser/affiliate-programs/{id}/codes/{codeId}', {
          params: { path: { id: props.programId, codeId: c.id } },
        });
      })
      .then((ok) => ok && codes.reload());

  return (
    <section class="codes" aria-label={`Codes of ${props.partner.name}`}>
      <h2>Codes of {props.partner.name}</h2>
      <p class="subtle">A customer who pays with one of these codes is credited to {props.partner.name}.</p>
      {codes.data === null && !codes.error && <Loading />}
      <ErrorBox error={codes.error} />
      <ErrorBox error={off.error} />
      {codes.data && codes.data.length === 0 && <p>No codes yet.</p>}
      {codes.data && codes.data.length > 0 && (
        <ul class="code-list">
          {codes.data.map((c) => (
            <li key={c.id} class={c.status === 'inactive' ? 'inactive' : undefined}>
              <code class="partner-code" data-testid="partner-code">
                {c.code}
              </code>{' '}
              <CopyButton text={c.code} label="Copy code" />{' '}
              <span class="muted">
                <span class={`badge ${c.status}`}>{c.status}</span> · created {dateTime(c.created_at)}
                {Object.entries(c.processor_ids).map(([k, v]) => (
                  <>
                    {' '}
                    · {k} <code>{v}</code>
                  </>
                ))}
              </span>
              {canWrite && c.status === 'active' && (
                <>
                  {' '}
                  <button type="button" disabled={off.busy} onClick={() => deactivate(c)}>
                    Deactivate<span class="sr-only"> code {c.code}</span>
                  </button>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      {canWrite && (
        <form
          class="inline-form"
          aria-label={`Create a code for ${props.partner.name}`}
          onSubmit={(e) => {
            e.preventDefault();
            const processorIds = Object.fromEntries(
              Object.entries(ids)
                .map(([k, v]) => [k, v.trim()])
                .filter(([, v]) => v !== ''),
            );
            void create
              .run(async () => {
                await api.POST('/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/codes', {
                  params: path,
                  body: { code: code.trim(), processor_ids: processorIds },
                });
              })
              .then((ok) => {
                if (!ok) return;
                setCode('');
                setIds({});
                codes.reload();
              });
          }}
        >
          <label>
            Code <span class="subtle">(3 to 32 letters, digits, - and _)</span>{' '}
            <input
              required
              value={code}
              maxLength={32}
              pattern="[A-Za-z0-9_\-]{3,32}"
              onInput={(e) => setCode((e.target as HTMLInputElement).value)}
            />
          </label>
          {PROCESSORS.map((p) => (
            <label key={p.key}>
              {p.label} <span class="subtle">(optional)</span>{' '}
              <input
                value={ids[p.key] ?? ''}
                maxLength={255}
                onInput={(e) => setIds({ ...ids, [p.key]: (e.target as HTMLInputElement).value })}
              />
            </label>
          ))}
          <button type="submit" class="primary" disabled={create.busy}>
            Create code
          </button>
          <ErrorBox error={create.error} />
        </form>
      )}
    </section>
  );
}
