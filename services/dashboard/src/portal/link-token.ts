// The token of an invite or sign-in link (docs/portal.md "Links with a token"). The service mails
// `/partner/invite#<token>` and `/partner/magic#<token>`: after `#`, the token is never sent to the server,
// so no server or proxy log and no Referer holds it. Links mailed before that carry it in the path
// (`/partner/invite/<token>`) and keep working. main.tsx calls takeLinkToken() before anything else runs:
// it reads the token, takes it out of the address bar and the history entry (replaceState to the bare
// `/partner/invite` or `/partner/magic`), and keeps it in memory only; a reload of that page has no token.

export type LinkKind = 'invite' | 'magic';

const LINK = /^\/partner\/(invite|magic)(?:\/([^/]+))?\/?$/;
const taken = new Map<LinkKind, string>();

function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Reads the token of an invite or sign-in link from the address (after `#`, else the older path form). */
export function takeLinkToken(): void {
  const m = LINK.exec(location.pathname);
  if (!m) return;
  const kind = m[1] as LinkKind;
  const token = location.hash.length > 1 ? decoded(location.hash.slice(1)) : m[2] ? decoded(m[2]) : '';
  if (location.hash !== '' || m[2] !== undefined) {
    history.replaceState(null, '', `/partner/${kind}${location.search}`);
  }
  if (token !== '') taken.set(kind, token);
}

/** The token takeLinkToken read for `kind`, or null (the page was opened without one, or reloaded). */
export function linkToken(kind: LinkKind): string | null {
  return taken.get(kind) ?? null;
}
