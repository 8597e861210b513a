// The signed-in partner: the session is the HttpOnly cookie svc_partner_session (SameSite=Lax); the portal
// knows only its public description (GET /api/partner/auth/session) and keeps the CSRF token in memory for
// its writes, as the dashboard does with its own session.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { api, setCsrfToken } from '../api.ts';
import type { Answer } from '../api.ts';

/** The signed-in account and the CSRF token for its writes. */
export type PartnerSessionInfo = Answer<'post', '/api/partner/auth/session'>['data'];

export interface PartnerSession {
  info: PartnerSessionInfo;
  /** Unread notifications, refreshed on every page change and once a minute. */
  unread: number;
  refreshUnread(): void;
  signOut(): Promise<void>;
}

export const PartnerContext = createContext<PartnerSession | null>(null);

export function usePartner(): PartnerSession {
  const s = useContext(PartnerContext);
  if (!s) throw new Error('usePartner outside a signed-in page');
  return s;
}

function accept(info: PartnerSessionInfo | null): PartnerSessionInfo | null {
  setCsrfToken(info?.csrf_token ?? null);
  return info;
}

/** The session of the cookie, or null when signed out. */
export async function loadPartnerSession(): Promise<PartnerSessionInfo | null> {
  try {
    return accept((await api.GET('/api/partner/auth/session')).data);
  } catch (e) {
    if ((e as { status?: number }).status === 401) return accept(null);
    throw e;
  }
}

export async function signIn(email: string, password: string): Promise<PartnerSessionInfo> {
  return accept((await api.POST('/api/partner/auth/session', { body: { email, password } })).data)!;
}

/** Accepting an invite, in its cookie variant: the account is signed in at once. */
export async function acceptInvite(body: {
  token: string;
  password?: string;
  name?: string;
}): Promise<PartnerSessionInfo> {
  return accept((await api.POST('/api/partner/auth/session/accept-invite', { body })).data)!;
}

/** Following a sign-in link, in its cookie variant. */
export async function verifyMagicLink(token: string): Promise<PartnerSessionInfo> {
  return accept((await api.POST('/api/partner/auth/session/magic-link', { body: { token } })).data)!;
}

export async function requestMagicLink(email: string): Promise<void> {
  await api.POST('/api/partner/auth/magic-link', { body: { email } });
}

export async function signOutRequest(): Promise<void> {
  await api.DELETE('/api/partner/auth/session');
  setCsrfToken(null);
}
