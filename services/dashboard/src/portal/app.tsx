// The partner portal's shell (/partner/…) and the public program pages (/p/<slug>): which page a path
// shows, the session probe, the header with the unread count, sign out. Pages live in pages/, one file each.
import { useEffect, useState } from 'preact/hooks';
import { Link, match, navigate, useLocation } from '../router.tsx';
import { ErrorBox } from '../widgets.tsx';
import { messageOf } from '../hooks.ts';
import { PartnerContext, loadPartnerSession, signOutRequest } from './session.tsx';
import type { PartnerSession, PartnerSessionInfo } from './session.tsx';
import { Skeleton } from './parts.tsx';
import { UnreadBadge, partnerNotifications, useUnreadCount } from '../notifications.tsx';
import { InvitePage, MagicLinkPage, SignIn } from './pages/SignIn.tsx';
import { linkToken } from './link-token.ts';
import { Programs } from './pages/Programs.tsx';
import { ProgramPage } from './pages/Program.tsx';
import { Commissions } from './pages/Commissions.tsx';
import { Payouts } from './pages/Payouts.tsx';
import { Notifications } from './pages/Notifications.tsx';
import { PayoutMethodPage } from './pages/PayoutMethod.tsx';
import { PublicProgram } from './pages/PublicProgram.tsx';
import { VerifyEmail } from './pages/VerifyEmail.tsx';

const HOME = '/partner/';
const NAV = [
  { href: '/partner/', label: 'Programs' },
  { href: '/partner/commissions', label: 'Commissions' },
  { href: '/partner/payouts', label: 'Payouts' },
  { href: '/partner/notifications', label: 'Notifications' },
  { href: '/partner/payout-method', label: 'Payout method' },
];

export function PortalApp() {
  const { path } = useLocation();
  // Pages that need no session, and do not ask for one (no 401 on a stranger's first visit).
  const pub = match('/p/:slug', path);
  if (pub) return <PublicProgram slug={pub.slug!} />;
  // The link's token was read and taken out of the address before the first render (link-token.ts).
  if (match('/partner/magic', path)) return <MagicLinkPage token={linkToken('magic')} onSession={goHome} />;
  if (match('/partner/invite', path)) return <InvitePage token={linkToken('invite')} onSession={goHome} />;
  return <SignedIn path={path} />;
}

/** After an invite or a magic link: the programs, with the token out of the address bar and history. */
function goHome(): void {
  navigate(HOME, true);
}

function SignedIn(props: { path: string }) {
  const { path } = props;
  const [info, setInfo] = useState<PartnerSessionInfo | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    loadPartnerSession().then(setInfo, (e: unknown) => setError(messageOf(e)));
  }, []);
  // Asked on every page change and after a read (tick), once a minute meanwhile; not while signed out.
  // Not for an unverified account either: it sees nothing but the banner (the API answers it 403).
  const verified = info ? info.account.email_verified !== false : false;
  const unread = useUnreadCount(verified ? partnerNotifications : null, [path, tick]);

  if (error) return <ErrorBox error={error} />;
  if (info === undefined) return <Skeleton label="Loading the portal" />;
  if (info && info.account.email_verified === false) {
    return (
      <VerifyEmail
        email={info.account.email}
        onSignOut={async () => {
          await signOutRequest();
          setInfo(null);
          navigate('/partner/login');
        }}
      />
    );
  }
  if (!info) {
    return (
      <SignIn
        onSession={(s) => {
          setInfo(s);
          // A deep link opened while signed out stays where it was.
          if (path === '/partner/login' || path === '/partner') navigate(HOME, true);
        }}
      />
    );
  }

  const session: PartnerSession = {
    info,
    unread,
    refreshUnread: () => setTick((n) => n + 1),
    async signOut() {
      await signOutRequest();
      setInfo(null);
      navigate('/partner/login');
    },
  };

  let body;
  const program = match('/partner/programs/:id', path);
  if (program) body = <ProgramPage programId={Number(program.id)} />;
  else if (
    path === '/partner' ||
    path === '/partner/' ||
    path === '/partner/login' ||
    path === '/partner/programs'
  )
    body = <Programs />;
  else if (path === '/partner/commissions') body = <Commissions />;
  else if (path === '/partner/payouts') body = <Payouts />;
  else if (path === '/partner/notifications') body = <Notifications />;
  else if (path === '/partner/payout-method') body = <PayoutMethodPage />;
  else
    body = (
      <p role="alert">
        This page does not exist. <Link href={HOME}>Go to your programs</Link>
      </p>
    );

  const current = (href: string) =>
    href === HOME
      ? path === '/partner' || path === HOME || path.startsWith('/partner/programs')
      : path === href;
  return (
    <PartnerContext.Provider value={session}>
      <header class="top">
        <Link href={HOME} class="brand">
          svc <span class="subtle">partners</span>
        </Link>
        <nav aria-label="Portal">
          {NAV.map((n) => (
            <Link href={n.href} aria-current={current(n.href) ? 'page' : undefined}>
              {n.label}
              {n.href === '/partner/notifications' && <UnreadBadge count={unread} />}
            </Link>
          ))}
        </nav>
        <span class="who">{info.account.email}</span>
        <button type="button" onClick={() => void session.signOut()}>
          Sign out
        </button>
      </header>
      <main>{body}</main>
    </PartnerContext.Provider>
  );
}
