// One program of the partner: its terms and their status there; once approved, their group, rate, progress to
// the next tier and bonuses (Rewards.tsx), their referral links (copy the full link, on the program's
// website_url or first allowed origin; create their own when the program allows), their codes (Codes.tsx) and
// their performance chart (Performance.tsx).
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { Link } from '../../router.tsx';
import { CopyButton } from '../../copy.tsx';
import { ErrorBox } from '../../widgets.tsx';
import { dateTime, money } from '../../format.ts';
import { useAction, useLoad } from '../../hooks.ts';
import { referralUrl } from '../../referral.ts';
import type { Answer } from '../../api.ts';
import type { PartnerProgram } from '../programs.ts';
import { Skeleton, StatusBadge, Terms, Title, View } from '../parts.tsx';
import { usePartnerPrograms } from '../programs.ts';
import { Owed, owedParts } from '../money.tsx';
import { PerformancePanel } from './Performance.tsx';
import { Codes } from './Codes.tsx';
import { RewardsPanel } from './Rewards.tsx';

export function ProgramPage(props: { programId: number }) {
  const programs = usePartnerPrograms();
  if (programs.error) return <ErrorBox error={programs.error} />;
  if (!programs.data) return <Skeleton lines={8} label="Loading the program" />;
  const p = programs.data.find((x) => x.program.id === props.programId);
  if (!p) {
    return (
      <>
        <Title>Program not found</Title>
        <p role="alert">
          You are not a partner of this program. <Link href="/partner/">Your programs</Link>
        </p>
      </>
    );
  }
  return (
    <>
      <Title>{p.program.name}</Title>
      <p>
        <StatusBadge status={p.status} /> · your balance{' '}
        <strong class={p.balance_cents < 0 ? 'negative' : undefined}>
          {money(p.balance_cents, p.program.currency)}
        </strong>{' '}
        · <Link href={`/partner/commissions?program_id=${p.program.id}`}>commissions</Link>
      </p>
      {owedParts(p).length > 0 && (
        <p>
          <Owed p={p} />
        </p>
      )}
      {p.status === 'pending' && (
        <p class="note" role="status">
          Your application is waiting for the advertiser's review. You get an email and a notification when it
          is decided; your links appear here once you are approved.
        </p>
      )}
      {p.status === 'rejected' && (
        <p class="note" role="status">
          The advertiser did not approve you for this program, so you have no working links in it.
          {p.rejection_reason && <> Their reason: “{p.rejection_reason}”.</>}
        </p>
      )}
      {p.status === 'approved' && <RewardsPanel p={p} />}
      {p.status === 'approved' && <Links partner={p} />}
      {p.status === 'approved' && <Codes programId={p.program.id} />}
      {p.status === 'approved' && <PerformancePanel programId={p.program.id} currency={p.program.currency} />}
      <section aria-labelledby="terms">
        <h2 id="terms">Terms</h2>
        <Terms terms={p.program} commission={p.commission} />
      </section>
    </>
  );
}

type PartnerLink = Answer<'get', '/api/partner/programs/{programId}/links'>['data'][number];

function Links(props: { partner: PartnerProgram }) {
  const program = props.partner.program;
  const params = { path: { programId: program.id } };
  const links = useLoad(
    async () => (await api.GET('/api/partner/programs/{programId}/links', { params })).data,
    [program.id],
  );
  // The partner's choice is kept per program in this browser; until they make one, the program's
  // link_base_url (its website_url, else its first allowed origin: docs/codes.md).
  const landingKey = `svc.partner.landing.${program.id}`;
  const [landing, setLandingState] = useState(
    () => localStorage.getItem(landingKey) ?? program.link_base_url ?? '',
  );
  const setLanding = (v: string) => {
    setLandingState(v);
    localStorage.setItem(landingKey, v);
  };
  const [code, setCode] = useState('');
  const create = useAction();
  const canCreate = program.partner_links !== false;
  const urlOf = (l: PartnerLink) => (landing ? referralUrl(landing, l.short_link) : null);

  return (
    <section aria-labelledby="links">
      <h2 id="links">Your links</h2>
      <p class="subtle">
        Share a link: visitors who click it are credited to you for {program.cookie_window_days} days.
      </p>
      <label class="wide">
        Page the links lead to <span class="subtle">(any page of the advertiser's site)</span>
        <input
          type="url"
          value={landing}
          placeholder="https://advertiser.example/"
          onInput={(e) => setLanding((e.target as HTMLInputElement).value)}
        />
      </label>
      <View loaded={links} lines={2} label="Loading your links">
        {(list) =>
          list.length === 0 ? (
            <p class="empty">You have no link in this program yet.</p>
          ) : (
            <ul class="link-list">
              {list.map((l) => {
                const full = urlOf(l);
                return (
                  <li key={l.id} class={l.status === 'inactive' ? 'inactive' : undefined}>
                    <div>
                      <code class="referral-url" data-testid="referral-url">
                        {full ?? `?aff=${l.short_link}`}
                      </code>{' '}
                      <CopyButton text={full ?? l.short_link} label={full ? 'Copy link' : 'Copy code'} />
                    </div>
                    <div class="muted">
                      <span class={`badge ${l.status}`}>{l.status}</span> · {l.clicks}{' '}
                      {l.clicks === 1 ? 'click' : 'clicks'} · last click {dateTime(l.last_clicked)}
                    </div>
                  </li>
                );
              })}
            </ul>
          )
        }
      </View>
      {canCreate ? (
        <form
          class="inline-form"
          aria-label="Create my own link"
          onSubmit={(e) => {
            e.preventDefault();
            void create
              .run(async () => {
                await api.POST('/api/partner/programs/{programId}/links', {
                  params,
                  body: code.trim() ? { short_link: code.trim() } : {},
                });
              })
              .then((ok) => {
                if (!ok) return;
                setCode('');
                links.reload();
              });
          }}
        >
          <fieldset>
            <legend>Create my own link</legend>
            <label>
              Link code <span class="subtle">(optional: letters, digits, - and _; random when empty)</span>
              <input
                value={code}
                maxLength={64}
                pattern="[A-Za-z0-9_\-]{1,64}"
                onInput={(e) => setCode((e.target as HTMLInputElement).value)}
              />
            </label>
            <button type="submit" class="primary" disabled={create.busy}>
              Create link
            </button>
          </fieldset>
          <ErrorBox error={create.error} />
        </form>
      ) : (
        <p class="note">This program's links are made by the advertiser.</p>
      )}
    </section>
  );
}
