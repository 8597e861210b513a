// Where the partner wants to be paid: PayPal or Wise (an email address) or a bank transfer (account
// details as text). One method per account, used by every advertiser's payout export.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ErrorBox } from '../../widgets.tsx';
import { useAction, useLoad } from '../../hooks.ts';
import type { Answer, RequestBody } from '../../api.ts';
import { Title, View } from '../parts.tsx';
import { usePartner } from '../session.tsx';

type PayoutMethod = NonNullable<Answer<'get', '/api/partner/payout-method'>['data']>;
type MethodType = RequestBody<'put', '/api/partner/payout-method'>['type'];

const TYPES: { value: MethodType; label: string }[] = [
  { value: 'paypal', label: 'PayPal' },
  { value: 'wise', label: 'Wise' },
  { value: 'bank_transfer', label: 'Bank transfer' },
];

export function PayoutMethodPage() {
  // Wrapped: "no method yet" (null) is an answer, not "still loading".
  const method = useLoad(async () => ({ m: (await api.GET('/api/partner/payout-method')).data }), []);
  return (
    <>
      <Title>Payout method</Title>
      <p class="subtle">
        How advertisers pay your approved commissions. It is shared with the advertisers of the programs you
        joined, for payouts only; an advertiser that added you without your accepting sees nothing of it.
        Every change is mailed to you.
      </p>
      <View loaded={method} lines={4} label="Loading your payout method">
        {({ m }) => <MethodForm initial={m} />}
      </View>
    </>
  );
}

function MethodForm(props: { initial: PayoutMethod | null }) {
  const { info } = usePartner();
  const [type, setType] = useState<MethodType>(props.initial?.type ?? 'paypal');
  const [email, setEmail] = useState(props.initial?.email ?? '');
  const [details, setDetails] = useState(props.initial?.details ?? '');
  const [saved, setSaved] = useState(false);
  const save = useAction();
  useEffect(() => setSaved(false), [type, email, details]);
  const byEmail = type !== 'bank_transfer';

  return (
    <form
      class="panel"
      aria-label="Payout method"
      onSubmit={(e) => {
        e.preventDefault();
        void save
          .run(async () => {
            await api.PUT('/api/partner/payout-method', {
              body: byEmail ? { type, email: email.trim() } : { type, details: details.trim() },
            });
          })
          .then((ok) => ok && setSaved(true));
      }}
    >
      <fieldset>
        <legend>Pay me by</legend>
        {TYPES.map((t) => (
          <label class="check">
            <input
              type="radio"
              name="type"
              value={t.value}
              checked={type === t.value}
              onChange={() => setType(t.value)}
            />{' '}
            {t.label}
          </label>
        ))}
      </fieldset>
      {byEmail ? (
        <label>
          {type === 'paypal' ? 'PayPal email' : 'Wise email'}
          <input
            type="email"
            required
            autocomplete="email"
            value={email}
            onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
          />
        </label>
      ) : (
        <label>
          Bank details{' '}
          <span class="subtle">(account holder, IBAN or account number, BIC or sort code, bank)</span>
          <textarea
            required
            rows={4}
            maxLength={2000}
            value={details}
            onInput={(e) => setDetails((e.target as HTMLTextAreaElement).value)}
          />
        </label>
      )}
      <ErrorBox error={save.error} />
      {saved && (
        <p role="status" class="sent">
          Saved. Your next payouts go to this {TYPES.find((t) => t.value === type)!.label} account. We mailed
          a notice of the change to {info.account.email}.
        </p>
      )}
      <button type="submit" class="primary" disabled={save.busy}>
        {save.busy ? 'Saving…' : 'Save payout method'}
      </button>
    </form>
  );
}
