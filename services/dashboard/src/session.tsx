// Who is logged in, which workspace is selected, and what the role there allows. The session itself is
// an HttpOnly cookie; this module only knows its public description (GET /api/auth/session).
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { api, setCsrfToken } from './api.ts';
import type { Answer } from './api.ts';
import type { Role } from '../../../shared/contracts/management.ts';

export type { Role };
/** The session's public description: the user, their workspaces and roles, the CSRF token. */
export type SessionInfo = Answer<'post', '/api/auth/session'>['data'];

export interface SessionState {
  info: SessionInfo;
  workspaceId: number;
  role: Role;
  /** Owners and admins change things; members and viewers only read (docs/api.md "Roles"). */
  canWrite: boolean;
  setWorkspace(id: number): void;
  logout(): Promise<void>;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a logged-in page');
  return s;
}

const WORKSPACE_KEY = 'svc.workspace';
export function storedWorkspace(info: SessionInfo): number | null {
  const saved = Number(localStorage.getItem(WORKSPACE_KEY));
  if (info.workspaces.some((w) => w.id === saved)) return saved;
  return info.workspaces[0]?.id ?? null;
}
export function storeWorkspace(id: number): void {
  localStorage.setItem(WORKSPACE_KEY, String(id));
}

function accept(info: SessionInfo): SessionInfo {
  setCsrfToken(info.csrf_token);
  return info;
}

/** The cookie's session, or null when logged out (200 `{ data: null }`: no failing request, no console error). */
export async function loadSession(): Promise<SessionInfo | null> {
  const { data } = await api.GET('/api/auth/session');
  return data === null ? null : accept(data);
}
export async function logIn(email: string, password: string): Promise<SessionInfo> {
  return accept((await api.POST('/api/auth/session', { body: { email, password } })).data);
}
export async function signUp(body: {
  email: string;
  password: string;
  name?: string;
  workspace_name?: string;
}): Promise<SessionInfo> {
  return accept((await api.POST('/api/auth/session/signup', { body })).data);
}
export async function logOut(): Promise<void> {
  await api.DELETE('/api/auth/session');
  setCsrfToken(null);
}
