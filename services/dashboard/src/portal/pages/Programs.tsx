// The partner's home: every program they belong to (one partner record each, possibly in several
// workspaces), with its status, terms and their balance there.
import { useState } from 'preact/hooks';
import { Link } from '../../router.tsx';
import { dateTime, money } from '../../format.ts';
import { usePartnerPrograms } from '../programs.ts';
import { StatusBadge, Terms, Title, View } from '../parts.tsx';
import { Invitations } from './Invitations.tsx';

export function Programs() {
  // An accepted invitation adds its programs: read them again.
  const [accepted, setAccepted] = useState(0);
  const programs = usePartnerPrograms([accepted]);
  return (
    <>
      <Title>Your programs</Title>
      <Invitations onAccepted={() => setAccepted((n) => n + 1)} />
      <View loaded={programs} lines={6} label="Loading your programs">
        {(list) =>
          list.length === 0 ? (
            <p class="empty">
              You are in no program yet. An advertiser can invite you, or you can apply on a program's public
              page; approved programs appear here with your links, invitations above them.
            </p>
          ) : (
            <ul class="cards">
              {list.map((p) => (
                <li class="card" key={p.partner_id}>
                  <article aria-labelledby={`program-${p.program.id}`}>
                    <h2 id={`program-${p.program.id}`}>
                      <Link href={`/partner/programs/${p.program.id}`}>{p.program.name}</Link>{' '}
                      <StatusBadge status={p.status} />
                    </h2>
                    <Terms terms={p.program} commission={p.commission}>
                      <dt>Your group</dt>
                      <dd>{p.group.name}</dd>
                      <dt>Your balance</dt>
                      <dd class={p.balance_cents < 0 ? 'negative' : undefined} data-testid="balance">
                        {money(p.balance_cents, p.program.currency)}
                      </dd>
                      <dt>Joined</dt>
                      <dd>{dateTime(p.created_at)}</dd>
                    </Terms>
                    <p class="actions">
                      <Link href={`/partner/programs/${p.program.id}`}>
                        {p.status === 'approved' ? 'Links and performance' : 'Details'}
                        <span class="sr-only"> of {p.program.name}</span>
                      </Link>
                      <Link href={`/partner/commissions?program_id=${p.program.id}`}>
                        Commissions<span class="sr-only"> in {p.program.name}</span>
                      </Link>
                    </p>
                  </article>
                </li>
              ))}
            </ul>
          )
        }
      </View>
    </>
  );
}
