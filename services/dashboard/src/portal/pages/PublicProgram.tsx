// A program's public page, /p/<slug>: what it pays and for how long, and the application form
// (GET /api/public/programs/:slug, POST …/apply). No session: anyone may read it and apply. A link with
// `?group=<slug>` (the Groups page gives one per group) shows that group's terms and the applicant joins it.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { Answer, RequestBody } from '../../api.ts';
import { ErrorBox } from '../../widgets.tsx';
import { useAction, useLoad } from '../../hooks.ts';
import type { PartnerStatus } from '../programs.ts';
import { Skeleton, Terms } from '../parts.tsx';

type Application = RequestBody<'post', '/api/public/programs/{slug}/apply'>;

interface Outcome {
  status: PartnerStatus;
  /** 201: this application was recorded now; 200: one with this email was already there. */
  created: boolean;
  withPassword: boolean;
}

/** The group the page's link names (`?group=<slug>`), passed on to both calls. */
const groupOfPage = () => new URLSearchParams(location.search).get('group') ?? undefined;

export function PublicProgram(props: { slug: string }) {
  const group = groupOfPage();
  const program = useLoad(
    async () =>
      (
        await api.GET('/api/public/programs/{slug}', {
          params: { path: { slug: props.slug }, query: { group } },
        })
      ).data,
    [props.slug, group],
  );
  useEffect(() => {
    document.title = `${program.data?.name ?? 'Partner program'} · become a partner`;
  }, [program.data?.name]);
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  return (
    <>
      <header class="top">
        <a class="brand" href="/partner/">
          svc <span class="subtle">partners</span>
        </a>
        <a class="who" href="/partner/login">
          Partner sign in
        </a>
      </header>
      <main class="public">
        {program.error ? (
          <>
            <h1>Program not found</h1>
            <p role="alert">
              There is no program at this address, or it does not take applications. Check the link you were
              given.
              {group !== undefined && <> ({program.error})</>}
            </p>
          </>
        ) : !program.data ? (
          <Skeleton lines={8} label="Loading the program" />
        ) : (
          <>
            <h1>{program.data.name}</h1>
            <p class="lede">Partner program: earn a commission on the sales you refer.</p>
            {program.data.description && <p class="description">{program.data.description}</p>}
            <section class="panel" aria-labelledby="terms">
              <h2 id="terms">What you earn</h2>
              <Terms terms={program.data} />
            </section>
            {outcome ? (
              <Answer outcome={outcome} program={program.data.name} />
            ) : (
              <ApplyForm slug={props.slug} group={group} onDone={setOutcome} />
            )}
          </>
        )}
      </main>
    </>
  );
}

function ApplyForm(props: { slug: string; group: string | undefined; onDone(o: Outcome): void }) {
  const submit = useAction();
  return (
    <form
      class="panel"
      aria-labelledby="apply"
      onSubmit={(e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget);
        const field = (k: string) => String(f.get(k) ?? '').trim();
        const password = String(f.get('password') ?? '');
        const body: Application = { name: field('name'), email: field('email') };
        if (password) body.password = password;
        for (const k of ['website', 'message'] as const) if (field(k)) body[k] = field(k);
        void submit.run(async () => {
          // The status matters: 201 recorded now, 200 one with this email was already there.
          const { data, response } = await api.raw.POST('/api/public/programs/{slug}/apply', {
            params: { path: { slug: props.slug }, query: { group: props.group } },
            body,
          });
          const answer = data as Answer<'post', '/api/public/programs/{slug}/apply'>;
          props.onDone({
            status: answer.data.status,
            created: response.status === 201,
            withPassword: !!password,
          });
        });
      }}
    >
      <h2 id="apply">Apply to become a partner</h2>
      <div class="grid">
        <label>
          Your name
          <input name="name" required maxLength={200} autocomplete="name" />
        </label>
        <label>
          Email
          <input name="email" type="email" required autocomplete="email" />
        </label>
        <label>
          Website or channel <span class="subtle">(optional)</span>
          <input name="website" type="url" placeholder="https://" autocomplete="url" />
        </label>
        <label>
          Password <span class="subtle">(optional, 10+ characters: creates your partner account now)</span>
          <input name="password" type="password" minLength={10} autocomplete="new-password" />
        </label>
      </div>
      <label>
        Message to the advertiser <span class="subtle">(optional: how you would promote them)</span>
        <textarea name="message" rows={4} maxLength={2000} />
      </label>
      <ErrorBox error={submit.error} />
      <button type="submit" class="primary" disabled={submit.busy}>
        {submit.busy ? 'Sending…' : 'Apply'}
      </button>
    </form>
  );
}

function Answer(props: { outcome: Outcome; program: string }) {
  const { status, created, withPassword } = props.outcome;
  const signIn = withPassword
    ? 'Sign in to the partner portal with your email and password'
    : 'Follow the sign-in link we emailed you, or ask for one on the sign-in page';
  let title: string;
  let text: string;
  if (!created) {
    title = 'You have already applied';
    text =
      status === 'approved'
        ? `An application with this email was already approved. ${signIn} to get your links.`
        : status === 'rejected'
          ? `An application with this email was already made, and ${props.program} did not approve it.`
          : 'An application with this email is waiting for review. You get an email when it is decided.';
  } else if (status === 'approved') {
    title = 'You are approved';
    text = `Welcome to ${props.program}: your first link is ready. ${signIn} to copy it.`;
  } else {
    title = 'Application received';
    text = `Thank you. ${props.program} reviews applications and you get an email when yours is decided. ${signIn} to follow it.`;
  }
  return (
    <section class="panel answer" role="status" aria-labelledby="answer">
      <h2 id="answer">{title}</h2>
      <p>{text}</p>
      <p>
        <a href="/partner/login">Go to the partner portal</a>
      </p>
    </section>
  );
}
