// How to connect a site to the program, and whether it is connected (GET /api/tracking/status/:programId):
// the three steps, the tracker snippet, server-side sale and refund calls, and buttons that send test-mode
// events the way `svc test click|lead|sale` does (the tracking routes, no token, additional_data.test_mode).
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { Answer, RequestBody } from '../api.ts';
import type { ProgramPageProps } from '../program.tsx';
import { CodeBlock } from '../copy.tsx';
import { ErrorBox, Loading } from '../widgets.tsx';
import { PageTitle, useProgram } from '../program.tsx';
import { dateTime } from '../format.ts';
import { messageOf, useLoad } from '../hooks.ts';
import { Link } from '../router.tsx';
import { useSession } from '../session.tsx';

type Status = Answer<'get', '/api/tracking/status/{programId}'>;
type Step = Status['data']['stepStatuses']['pageview'];
type TestStats = Status['data']['statistics']['pageview'];

type Sale = RequestBody<'post', '/api/v1/track/sale'>;
/** A test sale: its transaction_id may be left out (the route mints one in test mode, its description says). */
type TestSale = Omit<Sale, 'transaction_id'> & { transaction_id?: string };

type TestKind = 'click' | 'lead' | 'sale';
const POLL_MS = 1000;
const POLL_FOR_MS = 30_000;

export function Integration(props: ProgramPageProps) {
  const id = props.programId;
  const session = useSession();
  const program = useProgram(id);
  const status = useLoad(
    () => api.GET('/api/tracking/status/{programId}', { params: { path: { programId: id } } }),
    [id],
  );
  const [sent, setSent] = useState<{ kind: TestKind; message: string } | null>(null);
  const [sendError, setSendError] = useState<string | null>(null);
  const [busy, setBusy] = useState<TestKind | null>(null);
  const [waitingFor, setWaitingFor] = useState<'pageview' | 'referrals' | null>(null);
  const deadline = useRef(0);

  // After a test event, re-read the status until its step is complete (the worker records it shortly).
  useEffect(() => {
    if (waitingFor === null) return;
    if (status.data?.data.stepStatuses[waitingFor] === 'complete' && !status.loading) {
      setWaitingFor(null);
      return;
    }
    if (Date.now() > deadline.current) {
      setWaitingFor(null);
      setSendError('The test event was accepted but is not counted yet; refresh in a moment.');
      return;
    }
    const t = setTimeout(status.reload, POLL_MS);
    return () => clearTimeout(t);
  }, [waitingFor, status.data, status.loading]);

  const origin = location.origin;
  const sendTest = async (kind: TestKind) => {
    setBusy(kind);
    setSendError(null);
    setSent(null);
    try {
      const additional_data = { test_mode: true, program_id: id };
      const r =
        kind === 'click'
          ? await api.POST('/api/v1/track/click', {
              body: {
                affiliate_url: `${origin}/?aff=svc-dashboard-test`,
                page_url: location.href,
                additional_data,
              },
            })
          : kind === 'lead'
            ? await api.POST('/api/v1/track/lead', {
                body: { customer_key: 'svc-dashboard-test', additional_data },
              })
            : await api.POST('/api/v1/track/sale', {
                body: { amount_cents: 1000, additional_data } satisfies TestSale as Sale,
              });
      setSent({ kind, message: r.message ?? 'Test event recorded' });
      if (kind !== 'sale') {
        deadline.current = Date.now() + POLL_FOR_MS;
        setWaitingFor(kind === 'click' ? 'pageview' : 'referrals');
        status.reload();
      }
    } catch (e) {
      setSendError(messageOf(e));
    } finally {
      setBusy(null);
    }
  };

  const snippet = `<script src="${origin}/js/svc-tracker.js" data-program-id="${id}"></script>`;
  const leadCall = `// after your sign-up succeeds, with your own id for the customer:
svc.lead({ customer_key: 'user-123', email: 'ada@example.com' });`;
  const currency = program.data?.currency ?? 'USD';
  const sale = `curl -X POST ${origin}/api/v1/track/sale \\
  -H "Authorization: Bearer $SVC_TRACKING_TOKEN" \\
  -H "Content-Type: application/json" \\
  -H "Idempotency-Key: order-1001" \\
  -d '{"transaction_id":"order-1001","amount_cents":4900,"currency":"${currency}","customer_key":"user-123"}'`;
  const refund = `curl -X POST ${origin}/api/v1/track/refund \\
  -H "Authorization: Bearer $SVC_TRACKING_TOKEN" \\
  -H "Content-Type: application/json" \\
  -d '{"transaction_id":"order-1001","refund_reason":"requested_by_customer"}'`;
  // The same two calls with the client SDKs (sdk/typescript, sdk/python): they send the Idempotency-Key and
  // retry with it themselves.
  const sdkNode = `import { Svc } from 'svc-affiliate-sdk';

const svc = new Svc({ baseUrl: '${origin}', token: process.env.SVC_TRACKING_TOKEN });
await svc.track.sale({ transaction_id: 'order-1001', amount_cents: 4900, currency: '${currency}', customer_key: 'user-123' });
await svc.track.refund({ transaction_id: 'order-1001', refund_reason: 'requested_by_customer' });`;
  const sdkPython = `import os
from svc_affiliate import Svc

svc = Svc("${origin}", token=os.environ["SVC_TRACKING_TOKEN"])
svc.track.sale(transaction_id="order-1001", amount_cents=4900, currency="${currency}", customer_key="user-123")
svc.track.refund(transaction_id="order-1001", refund_reason="requested_by_customer")`;

  const s = status.data?.data;
  const testButton = (kind: TestKind, label: string) => (
    <button type="button" disabled={busy !== null || waitingFor !== null} onClick={() => void sendTest(kind)}>
      {busy === kind ? 'Sending…' : label}
    </button>
  );

  return (
    <>
      <PageTitle title="Integration" program={program.data} />
      <ErrorBox error={program.error} />
      <section aria-labelledby="steps">
        <h2 id="steps">Setup steps</h2>
        {status.error ? (
          <ErrorBox error={status.error} />
        ) : !s ? (
          <Loading />
        ) : (
          <>
            <ol class="steps">
              <StepItem
                n={1}
                title="Page view"
                state={s.stepStatuses.pageview}
                text={
                  'Complete once a test page view is recorded: open a test page of your site with the tracker and data-test-mode="true", or use the button below.'
                }
                stats={s.statistics.pageview}
              />
              <StepItem
                n={2}
                title="Referrals"
                state={s.stepStatuses.referrals}
                text={
                  'Complete once a test lead is recorded (svc.lead on a page with data-test-mode="true", or the button below).'
                }
                stats={s.statistics.referrals}
              />
              <StepItem
                n={3}
                title="Payments"
                state={s.stepStatuses.payments}
                text={`Payment processor: ${s.statistics.payments.processorConnectionStatus.replace(/_/g, ' ')}${
                  s.statistics.payments.connectionDate
                    ? `, since ${dateTime(s.statistics.payments.connectionDate)}`
                    : ''
                }. Sales are recorded from its webhooks or your server's sale calls.`}
              >
                {s.stepStatuses.payments === 'pending' && session.canWrite && (
                  <>
                    {' '}
                    <Link href="/settings">Connect the payment processor in Settings</Link>
                  </>
                )}
              </StepItem>
            </ol>
            <p class="subtle">
              Last checked {dateTime(s.lastUpdated)}.{' '}
              <button type="button" onClick={status.reload}>
                Check again
              </button>
            </p>
          </>
        )}
        {session.canWrite && (
          <div class="panel">
            <h3>Send test events</h3>
            <p class="subtle">
              Test events check the integration; they are kept apart and change no figures, attribution or
              commissions.
            </p>
            <p class="actions">
              {testButton('click', 'Send a test page view')}
              {testButton('lead', 'Send a test referral')}
              {testButton('sale', 'Send a test sale')}
            </p>
            <p aria-live="polite">
              {waitingFor && 'Sent; waiting for the step to turn complete…'}
              {!waitingFor && sent && `${sent.message}.`}
            </p>
            <ErrorBox error={sendError} />
          </div>
        )}
      </section>
      <section aria-labelledby="tracker">
        <h2 id="tracker">1. Add the tracker to every page</h2>
        <p>
          Put this before <code>&lt;/body&gt;</code>. On a page reached through a partner's link (with{' '}
          <code>?aff=</code>) it records the click and keeps its id in a first-party cookie. Your site's
          origin must be on the program's allowed origins (<Link href="/programs">Programs</Link>, Edit).
        </p>
        <CodeBlock label="Tracker snippet" code={snippet} />
        <h2>2. Record sign-ups as leads</h2>
        <CodeBlock label="Lead call" code={leadCall} />
        <h2>3. Record sales and refunds from your server</h2>
        <p>
          With the program's tracking token (shown once when the program was created or its token
          regenerated). A payment processor connected in Settings records sales without these calls.
        </p>
        <CodeBlock label="Sale" code={sale} />
        <CodeBlock label="Refund" code={refund} />
        <p>
          Or with a client SDK, which sends the <code>Idempotency-Key</code> and retries with it when the
          service is busy or the connection drops (<code>sdk/typescript</code>, <code>sdk/python</code> in the
          svc repository):
        </p>
        <CodeBlock label="Node.js" code={sdkNode} />
        <CodeBlock label="Python" code={sdkPython} />
        <p>
          Every field and answer: <a href="/docs">API reference</a>.
        </p>
      </section>
    </>
  );
}

function StepItem(props: {
  n: number;
  title: string;
  state: Step;
  text: string;
  stats?: TestStats;
  children?: preact.ComponentChildren;
}) {
  const done = props.state === 'complete';
  return (
    <li class={`step ${props.state}`} data-testid={`step-${props.title.toLowerCase().replace(/ /g, '-')}`}>
      <span class="step-mark" aria-hidden="true">
        {done ? '✓' : props.n}
      </span>
      <div>
        <strong>{props.title}</strong>: <span class="step-state">{done ? 'Complete' : 'Not yet'}</span>
        <br />
        <span class="subtle">
          {props.text}
          {props.stats?.latestTestEvent &&
            ` Latest test event ${dateTime(props.stats.latestTestEvent.timestamp)} (${props.stats.testEventCount}${
              props.stats.testEventCount >= 10 ? '+' : ''
            } seen).`}
        </span>
        {props.children}
      </div>
    </li>
  );
}
