// The mail templates: each MailMessage becomes a subject, a plain-text body and an HTML body. Every value
// that reaches the HTML is escaped (program, partner and workspace names and notification texts are user
// input); the links are absolute (built from PUBLIC_URL by the writer, checked by parse.ts) and shown in
// full as well, for mail clients that hide buttons.
import type { MailMessage } from '../../../shared/contracts/mail.ts';

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text → HTML text or attribute value. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** A header value from user input: one line, no control characters, at most 200 characters. */
function oneLine(s: string): string {
  // eslint-disable-next-line no-control-regex
  const flat = s.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 199)}…` : flat;
}

/** Paragraphs of plain text (blank-line separated) as HTML, escaped, single newlines kept. */
function paragraphs(text: string): string {
  return text
    .split(/\n{2,}/)
    .map((p) => `<p style="margin:0 0 16px">${escapeHtml(p).replace(/\n/g, '<br>')}</p>`)
    .join('\n');
}

interface Parts {
  subject: string;
  /** The first line of the text, the HTML's heading. */
  heading: string;
  /** Plain-text paragraphs before the link. */
  intro: string;
  /** The button's label. */
  action: string;
  url: string;
  /** Plain-text paragraphs after the link. */
  outro: string;
}

function compose(p: Parts): RenderedMail {
  const subject = oneLine(p.subject);
  const text = `${p.heading}\n\n${p.intro}\n\n${p.action}:\n${p.url}\n\n${p.outro}\n`;
  const url = escapeHtml(p.url);
  const html = `<!doctype html>
<html>
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(subject)}</title></head>
<body style="margin:0;padding:24px;background:#f4f5f7;font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:15px;line-height:1.5;color:#1f2328">
<div style="max-width:560px;margin:0 auto;background:#ffffff;border-radius:8px;padding:28px">
<h1 style="margin:0 0 20px;font-size:20px;line-height:1.3">${escapeHtml(p.heading)}</h1>
${paragraphs(p.intro)}
<p style="margin:24px 0"><a href="${url}" style="display:inline-block;background:#2563eb;color:#ffffff;text-decoration:none;padding:10px 18px;border-radius:6px;font-weight:600">${escapeHtml(p.action)}</a></p>
<p style="margin:0 0 16px;font-size:13px;color:#57606a">Or open this link: <a href="${url}" style="color:#2563eb;word-break:break-all">${url}</a></p>
${paragraphs(p.outro)}
</div>
</body>
</html>
`;
  return { subject, text, html };
}

export function renderMail(m: MailMessage): RenderedMail {
  switch (m.template) {
    case 'partner_invite': {
      const d = m.data;
      const who = d.workspace_name ? `${d.workspace_name} invited you` : 'You are invited';
      return compose({
        subject: `You're invited to the ${d.program_name} affiliate program`,
        heading: `Join the ${d.program_name} affiliate program`,
        intro: `Hi ${d.partner_name},\n\n${who} to join the ${d.program_name} affiliate program. Accept the invitation to set your password, get your referral links and follow your clicks, sales and earnings.`,
        action: 'Accept the invitation',
        url: d.url,
        outro:
          'The link works once and expires in 14 days. If you did not expect this invitation, ignore this mail.',
      });
    }
    case 'magic_link':
      if (m.data.program_name) {
        const program = m.data.program_name;
        return compose({
          subject: `Confirm your application to ${program}`,
          heading: `Confirm your application to ${program}`,
          intro: `Someone applied to the ${program} affiliate program with this address. If it was you, follow this link: it confirms your address and adds the application to your partner account.`,
          action: 'Confirm and sign in',
          url: m.data.url,
          outro:
            'The link works once and expires in 15 minutes. If you did not apply, ignore this mail: nothing is linked to you without it.',
        });
      }
      return compose({
        subject: 'Your sign-in link',
        heading: 'Sign in to your partner account',
        intro: 'Use this link to sign in. No password needed.',
        action: 'Sign in',
        url: m.data.url,
        outro:
          'The link works once and expires in 15 minutes. If you did not ask for it, ignore this mail: nobody can sign in without it.',
      });
    case 'payout_method_changed':
      return compose({
        subject: 'Your payout method changed',
        heading: 'Your payout method changed',
        intro: `The payout method of your partner account was changed on ${m.data.changed_at}. Payouts now go to: ${m.data.method}.`,
        action: 'Review your payout method',
        url: m.data.url,
        outro:
          'If you made this change, there is nothing to do. If you did not, sign in with a new sign-in link, set your payout method again and change your password: someone else may have had access to your account.',
      });
    case 'notification':
      return compose({
        subject: m.data.title,
        heading: m.data.title,
        intro: m.data.body,
        action: 'Open your notifications',
        url: m.data.url,
        outro: 'You receive this mail because it concerns your account.',
      });
  }
}
