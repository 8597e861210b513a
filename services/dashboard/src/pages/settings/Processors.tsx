// Settings → Paddle, Lemon Squeezy, Polar: one section per processor (as the Stripe section): what to paste
// where in the processor's dashboard, the webhook URL of each program, the custom-data keys to pass at
// checkout, and the form that stores (or forgets) the secret the processor shows. docs/processors.md.
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { Answer } from '../../api.ts';
import { useSession } from '../../session.tsx';
import { ConfirmButton, ErrorBox, ReadOnlyNote, Show } from '../../widgets.tsx';
import { useAction, useLoad } from '../../hooks.ts';
import type { useWorkspacePrograms } from '../../program.tsx';
import { WebhookUrls } from './Processor.tsx';
import { OTHER_PROCESSORS, PROCESSOR_TITLES } from '../../processors.ts';
import type { OtherProcessor } from '../../processors.ts';

type Row = Answer<'get', '/api/advertiser/processor-connections'>['data'][number];
type Name = OtherProcessor;

/** What to do in each processor's dashboard (a processor the API adds needs its words here: typechecked). */
const GUIDE: Record<Name, { where: string; secret: string; events: string; custom: string }> = {
  paddle: {
    where: 'Paddle → Developer tools → Notifications → New destination: paste the URL below.',
    secret: 'Copy the destination’s secret key (pdl_ntfset_…) and paste it here.',
    events: 'transaction.completed, adjustment.created, adjustment.updated',
    custom: 'customData',
  },
  lemonsqueezy: {
    where: 'Lemon Squeezy → Settings → Webhooks → +: paste the URL below.',
    secret: 'Type a signing secret there (6 to 40 characters) and the same one here.',
    events: 'order_created, order_refunded, subscription_payment_success, subscription_payment_refunded',
    custom: 'checkout_data.custom',
  },
  polar: {
    where: 'Polar → Settings → Webhooks → Add endpoint (format Raw): paste the URL below.',
    secret: 'Copy the endpoint’s secret and paste it here.',
    events: 'order.paid, order.refunded',
    custom: 'metadata',
  },
};

export function Processors({ programs }: { programs: ReturnType<typeof useWorkspacePrograms> }) {
  const { workspaceId } = useSession();
  const rows = useLoad(
    async () =>
      (
        await api.GET('/api/advertiser/processor-connections', {
          params: { query: { workspace_id: workspaceId } },
        })
      ).data,
    [workspaceId],
  );
  return (
    <Show loaded={rows}>
      {(list) => (
        <>
          {OTHER_PROCESSORS.map((name) => (
            <ProcessorSection
              key={name}
              name={name}
              row={list.find((r) => r.processor === name)!}
              programs={programs}
              onChange={rows.reload}
            />
          ))}
        </>
      )}
    </Show>
  );
}

function ProcessorSection(props: {
  name: Name;
  row: Row;
  programs: ReturnType<typeof useWorkspacePrograms>;
  onChange: () => void;
}) {
  const { workspaceId, canWrite } = useSession();
  const guide = { ...GUIDE[props.name], title: PROCESSOR_TITLES[props.name] };
  const [secret, setSecret] = useState('');
  const submit = useAction();
  const h = `${props.name}-h`;
  return (
    <section id={props.name} aria-labelledby={h}>
      <h2 id={h}>{guide.title}</h2>
      <ol class="note">
        <li>{guide.where}</li>
        <li>Events: {guide.events}.</li>
        <li>{guide.secret}</li>
        <li>
          At checkout, pass <code>svc_customer_key</code> (or <code>svc_click_id</code>) and, for a partner
          code, <code>svc_coupon_code</code> in {guide.custom}.
        </li>
      </ol>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <span class={`badge ${props.row.connected ? 'connected' : 'pending'}`}>
            {props.row.connected ? 'connected' : 'not connected'}
          </span>
        </dd>
        <dt>Secret</dt>
        <dd>{props.row.secret_masked ? <code>{props.row.secret_masked}</code> : 'none'}</dd>
      </dl>
      <h3>Webhook URLs</h3>
      <WebhookUrls
        programs={props.programs}
        urlOf={(id) => props.row.webhook_url.replace('{programId}', String(id))}
      />
      {canWrite ? (
        <>
          <form
            class="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              void submit.run(async () => {
                await api.PUT('/api/advertiser/processor-connections/{processor}', {
                  params: { path: { processor: props.name }, query: { workspace_id: workspaceId } },
                  body: { workspace_id: workspaceId, webhook_secret: secret },
                });
                setSecret('');
                props.onChange();
              });
            }}
          >
            <fieldset>
              <legend>
                {props.row.connected ? `Replace the ${guide.title} secret` : `Connect ${guide.title}`}
              </legend>
              <label>
                Webhook secret{' '}
                <input
                  type="password"
                  autocomplete="off"
                  value={secret}
                  maxLength={255}
                  required
                  onInput={(e) => setSecret((e.target as HTMLInputElement).value)}
                />
              </label>
              <button type="submit" class="primary" disabled={submit.busy}>
                {props.row.connected ? 'Save secret' : 'Connect'}
              </button>
            </fieldset>
            <ErrorBox error={submit.error} />
          </form>
          {props.row.connected && (
            <p>
              <ConfirmButton
                label={`Disconnect ${guide.title}`}
                question={`Forget the ${guide.title} secret? Its events are refused from then on.`}
                confirmLabel="Yes, disconnect"
                danger
                onConfirm={async () => {
                  await api.DELETE('/api/advertiser/processor-connections/{processor}', {
                    params: { path: { processor: props.name }, query: { workspace_id: workspaceId } },
                  });
                  props.onChange();
                }}
              />
            </p>
          )}
        </>
      ) : (
        <ReadOnlyNote>Owners and admins connect {guide.title}.</ReadOnlyNote>
      )}
    </section>
  );
}
