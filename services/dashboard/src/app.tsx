// The shell: session loading, the workspace switcher, navigation, and the route table. Pages live in
// pages/, one file each; a page gets its route params as props.
import { useEffect, useState } from 'preact/hooks';
import type { ComponentType } from 'preact';
import { Link, match, navigate, useLocation } from './router.tsx';
import { SessionContext, loadSession, logOut, storeWorkspace, storedWorkspace } from './session.tsx';
import type { Role, SessionInfo, SessionState } from './session.tsx';
import { ErrorBox, Loading } from './widgets.tsx';
import { messageOf } from './hooks.ts';
import type { ProgramPageProps } from './program.tsx';
import { Login, Signup } from './pages/Auth.tsx';
import { Programs } from './pages/Programs.tsx';
import { Settings } from './pages/Settings.tsx';
import { Overview } from './pages/Overview.tsx';
import { Events } from './pages/Events.tsx';
import { Partners } from './pages/Partners.tsx';
import { Groups } from './pages/Groups.tsx';
import { Commissions } from './pages/Commissions.tsx';
import { Payouts } from './pages/Payouts.tsx';
import { Risk } from './pages/Risk.tsx';
import { Integration } from './pages/Integration.tsx';
import { ImportPage } from './pages/Import.tsx';
import { Docs } from './pages/Docs.tsx';
import { NotificationBell, Notifications } from './pages/Notifications.tsx';

const PROGRAM_PAGES: {
  slug: string;
  label: string;
  page: ComponentType<ProgramPageProps>;
  /** Roles the page is not offered to (it needs a permission they lack: docs/api.md "Roles"). */
  hiddenFrom?: Role[];
}[] = [
  { slug: 'overview', label: 'Overview', page: Overview },
  // The events list needs tracking:list, which a viewer does not have.
  { slug: 'events', label: 'Events', page: Events, hiddenFrom: ['viewer'] },
  { slug: 'partners', label: 'Partners', page: Partners },
  { slug: 'groups', label: 'Groups', page: Groups },
  { slug: 'commissions', label: 'Commissions', page: Commissions },
  { slug: 'payouts', label: 'Payouts', page: Payouts },
  { slug: 'risk', label: 'Risk', page: Risk },
  { slug: 'integration', label: 'Integration', page: Integration },
  { slug: 'import', label: 'Import', page: ImportPage },
];

export function App() {
  const { path } = useLocation();
  const [info, setInfo] = useState<SessionInfo | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [workspaceId, setWorkspaceId] = useState<number | null>(null);
  // Bumped after a notification is read, so the bell asks for its count again.
  const [readTick, setReadTick] = useState(0);

  const isDocs = path === '/docs';
  useEffect(() => {
    // The API reference needs no session: it does not ask (nor log a 401 in the console).
    if (isDocs || info !== undefined) return;
    loadSession().then(
      (s) => {
        setInfo(s);
        if (s) setWorkspaceId(storedWorkspace(s));
      },
      (e: unknown) => setError(messageOf(e)),
    );
  }, [isDocs]);

  const onSession = (s: SessionInfo) => {
    setInfo(s);
    setWorkspaceId(storedWorkspace(s));
    // A deep link opened while logged out stays where it was; the log in and sign up pages go to Programs.
    if (['/', '/login', '/signup'].includes(location.pathname)) navigate('/programs');
  };

  if (isDocs) return <Docs />;
  if (error) return <ErrorBox error={error} />;
  if (info === undefined) return <Loading />;
  if (path === '/signup') return <Signup onSession={onSession} />;
  if (!info || workspaceId === null) {
    return <Login onSession={onSession} />;
  }
  const workspace = info.workspaces.find((w) => w.id === workspaceId) ?? info.workspaces[0]!;
  const session: SessionState = {
    info,
    workspaceId: workspace.id,
    role: workspace.role,
    canWrite: workspace.role === 'owner' || workspace.role === 'admin',
    setWorkspace(id) {
      storeWorkspace(id);
      setWorkspaceId(id);
      navigate('/programs');
    },
    async logout() {
      await logOut();
      setInfo(null);
      navigate('/');
    },
  };

  let body;
  let programId: number | null = null;
  const pm = match('/programs/:id/:page', path);
  const programPage = pm ? PROGRAM_PAGES.find((p) => p.slug === pm.page) : undefined;
  if (pm && programPage) {
    programId = Number(pm.id);
    const Page = programPage.page;
    body = <Page programId={programId} />;
  } else if (match('/settings', path)) {
    body = <Settings />;
  } else if (match('/notifications', path)) {
    body = <Notifications onRead={() => setReadTick((n) => n + 1)} />;
  } else if (path === '/' || match('/programs', path) || path === '/login') {
    body = <Programs />;
  } else {
    body = (
      <p role="alert">
        This page does not exist. <Link href="/programs">Go to Programs</Link>
      </p>
    );
  }

  return (
    <SessionContext.Provider value={session}>
      <header class="top">
        <Link href="/programs" class="brand">
          svc
        </Link>
        <nav aria-label="Workspace">
          <Link
            href="/programs"
            aria-current={path.startsWith('/programs') && programId === null ? 'page' : undefined}
          >
            Programs
          </Link>
          <Link href="/settings" aria-current={path === '/settings' ? 'page' : undefined}>
            Settings
          </Link>
          <a href="/docs">API reference</a>
        </nav>
        {info.workspaces.length > 1 && (
          <label class="switcher">
            Workspace{' '}
            <select
              value={String(workspace.id)}
              onChange={(e) => session.setWorkspace(Number((e.target as HTMLSelectElement).value))}
            >
              {info.workspaces.map((w) => (
                <option value={String(w.id)}>{w.name}</option>
              ))}
            </select>
          </label>
        )}
        <NotificationBell path={path} tick={readTick} />
        <span class="who">{info.user.email}</span>
        <button type="button" onClick={() => void session.logout()}>
          Log out
        </button>
      </header>
      {programId !== null && (
        <nav class="program-nav" aria-label="Program">
          {PROGRAM_PAGES.filter((p) => !p.hiddenFrom?.includes(session.role)).map((p) => (
            <Link
              href={`/programs/${programId}/${p.slug}`}
              aria-current={pm?.page === p.slug ? 'page' : undefined}
            >
              {p.label}
            </Link>
          ))}
        </nav>
      )}
      <main>{body}</main>
    </SessionContext.Provider>
  );
}
