// A program's partner settings (CONTRACT part two "Applications"): its public page at /p/<slug> with the
// application form, whether applications are approved automatically, the description shown there, and
// whether partners may create their own links; and (docs/codes.md) where full referral links point and
// whether a partner code beats a click. The fields of the program form and the lines of its card.
import type { Program, ProgramFields } from '../program.tsx';

export interface PartnerSettings {
  public_page: boolean;
  auto_approve: boolean;
  description: string;
  partner_links: boolean;
  website_url: string;
  code_attribution: 'fallback' | 'override';
}

export const DESCRIPTION_MAX = 2000;

export function partnerSettingsOf(p: Program | undefined): PartnerSettings {
  return {
    public_page: p?.public_page ?? false,
    auto_approve: p?.auto_approve ?? false,
    description: p?.description ?? '',
    partner_links: p?.partner_links ?? true,
    website_url: p?.website_url ?? '',
    code_attribution: p?.code_attribution === 'override' ? 'override' : 'fallback',
  };
}

/** The request fields: an empty description is sent as null (none). */
export function partnerSettingsBody(
  s: PartnerSettings,
): Pick<
  ProgramFields,
  'public_page' | 'auto_approve' | 'description' | 'partner_links' | 'website_url' | 'code_attribution'
> {
  const description = s.description.trim();
  const website = s.website_url.trim();
  return {
    public_page: s.public_page,
    auto_approve: s.auto_approve,
    description: description === '' ? null : description,
    partner_links: s.partner_links,
    website_url: website === '' ? null : website,
    code_attribution: s.code_attribution,
  };
}

export function publicPageUrl(slug: string): string {
  return `${location.origin}/p/${encodeURIComponent(slug)}`;
}

export function PartnerSettingsFields(props: { value: PartnerSettings; onChange(v: PartnerSettings): void }) {
  const v = props.value;
  const set = (patch: Partial<PartnerSettings>) => props.onChange({ ...v, ...patch });
  const check = (key: 'public_page' | 'auto_approve' | 'partner_links', label: string) => (
    <label class="check own-line">
      <input
        type="checkbox"
        checked={v[key]}
        onChange={(e) => set({ [key]: (e.target as HTMLInputElement).checked })}
      />{' '}
      {label}
    </label>
  );
  return (
    <fieldset>
      <legend>Partners</legend>
      {check('public_page', 'Public page: anyone can read the terms and apply at /p/<slug> (once live)')}
      {check('auto_approve', 'Approve applications automatically (each gets a link at once)')}
      {check('partner_links', 'Partners may create their own links')}
      <label>
        Description <span class="subtle">(shown on the public page; up to {DESCRIPTION_MAX} characters)</span>
        <textarea
          rows={4}
          maxLength={DESCRIPTION_MAX}
          value={v.description}
          onInput={(e) => set({ description: (e.target as HTMLTextAreaElement).value })}
        />
      </label>
      <label>
        Website URL{' '}
        <span class="subtle">(full referral links point here; else the first allowed origin)</span>
        <input
          type="url"
          maxLength={2000}
          value={v.website_url}
          placeholder="https://your-site.example/"
          onInput={(e) => set({ website_url: (e.target as HTMLInputElement).value })}
        />
      </label>
      <label>
        Partner codes{' '}
        <select
          value={v.code_attribution}
          onChange={(e) =>
            set({
              code_attribution: (e.target as HTMLSelectElement).value as PartnerSettings['code_attribution'],
            })
          }
        >
          <option value="fallback">credit a code only when no click or lead named another partner</option>
          <option value="override">a code wins over a click or lead of another partner</option>
        </select>
      </label>
    </fieldset>
  );
}

/** The card's lines: where partners apply and how they are admitted. */
export function PartnerSettingsFacts(props: { program: Program }) {
  const p = props.program;
  const s = partnerSettingsOf(p);
  return (
    <>
      <dt>Public page</dt>
      <dd>
        {s.public_page ? (
          <>
            <a href={publicPageUrl(p.slug)}>{publicPageUrl(p.slug)}</a>
            {p.status !== 'live' && <span class="subtle"> (opens when the program is live)</span>}
          </>
        ) : (
          'none (partners join by invite)'
        )}
      </dd>
      <dt>Applications</dt>
      <dd>{s.auto_approve ? 'approved automatically' : 'reviewed on the Partners page'}</dd>
      <dt>Partner links</dt>
      <dd>{s.partner_links ? 'partners may create their own' : 'made by you only'}</dd>
      <dt>Referral links on</dt>
      <dd>{s.website_url || p.allowed_origins[0] || 'no site: partners share codes and short links'}</dd>
      <dt>Partner codes</dt>
      <dd>{s.code_attribution === 'override' ? 'win over clicks' : 'credit customers no click named'}</dd>
    </>
  );
}
