// The rules of referral links, pure. short_link is globally unique: the `aff` value alone finds the link
// at the ingress; one is generated when the body gives none.
import { randomBytes } from 'node:crypto';
import { iso } from '../../common.ts';
import type { LinkRow } from './dal.ts';

export const SHORT_LINK_RE = /^[A-Za-z0-9_-]{1,64}$/;
export const LINK_STATUSES = ['active', 'inactive'] as const;

export const ERR = {
  shortLink: 'short_link must be 1 to 64 characters: letters, digits, _ or -',
  shortLinkTaken: 'short_link is already taken',
  status: "status must be 'active' or 'inactive'",
  partnerNotFound: 'Partner not found in this program',
  linkNotFound: 'Referral link not found',
} as const;

/** 8 URL-safe characters (48 random bits). */
export const generateShortLink = () => randomBytes(6).toString('base64url');

/** The short links to try in order: the wanted one only, or up to five generated ones. */
export function shortLinkCandidates(wanted: string | null | undefined): string[] {
  if (wanted !== undefined && wanted !== null) return [wanted];
  return Array.from({ length: 5 }, generateShortLink);
}

export const toLink = (r: LinkRow) => ({
  id: Number(r.id),
  short_link: r.short_link,
  status: r.status,
  clicks: Number(r.clicks),
  last_clicked: iso(r.last_clicked),
});
