// A partner's full referral URL: a page of the advertiser's site with `aff=<short_link>` in its query
// (docs/ingress.md: the tracker on that page reads `aff` and records the click). The page defaults to
// the program's website_url, else its first allowed origin, the site the tracker is allowed to report
// from (docs/codes.md "Full referral links").

/** The landing page to suggest: website_url, else the first allowed origin, else '' (none). */
export function defaultLanding(allowedOrigins: readonly string[], websiteUrl: string | null = null): string {
  if (websiteUrl) return websiteUrl;
  const first = allowedOrigins[0];
  return first ? `${first.replace(/\/+$/, '')}/` : '';
}

/** `landing` with aff=`shortLink` (replacing any aff it had), or null when `landing` is not an http(s) URL. */
export function referralUrl(landing: string, shortLink: string): string | null {
  let url: URL;
  try {
    url = new URL(landing.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  url.searchParams.set('aff', shortLink);
  return url.toString();
}
