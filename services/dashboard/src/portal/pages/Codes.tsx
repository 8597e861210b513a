// The partner's codes in one program (GET /api/partner/programs/:programId/codes; docs/codes.md): each with
// a Copy button. A customer who pays with one is credited to the partner.
import { api } from '../../api.ts';
import { CopyButton } from '../../copy.tsx';
import { dateTime } from '../../format.ts';
import { useLoad } from '../../hooks.ts';
import { View } from '../parts.tsx';

export function Codes(props: { programId: number }) {
  const codes = useLoad(
    async () =>
      (
        await api.GET('/api/partner/programs/{programId}/codes', {
          params: { path: { programId: props.programId } },
        })
      ).data,
    [props.programId],
  );
  return (
    <section aria-labelledby="codes">
      <h2 id="codes">Your codes</h2>
      <p class="subtle">
        Share a code: a customer who pays with it is credited to you, with or without a click.
      </p>
      <View loaded={codes} lines={1} label="Loading your codes">
        {(list) =>
          list.length === 0 ? (
            <p class="empty">The advertiser has given you no code in this program.</p>
          ) : (
            <ul class="code-list">
              {list.map((c) => (
                <li key={c.id} class={c.status === 'inactive' ? 'inactive' : undefined}>
                  <code class="partner-code" data-testid="partner-code">
                    {c.code}
                  </code>{' '}
                  {c.status === 'active' && <CopyButton text={c.code} label="Copy code" />}{' '}
                  <span class="muted">
                    <span class={`badge ${c.status}`}>{c.status}</span> · since {dateTime(c.created_at)}
                  </span>
                </li>
              ))}
            </ul>
          )
        }
      </View>
    </section>
  );
}
