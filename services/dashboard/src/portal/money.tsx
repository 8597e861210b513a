// What a partner is owed in a program and not yet paid (GET /api/partner/programs: pending_cents, held_cents,
// approved_cents, next_payable_at), in one line of words: only its non-zero parts, nothing when all are zero.
import { money } from '../format.ts';
import type { PartnerProgram } from './programs.ts';

const day = (iso: string) => new Date(iso).toLocaleDateString(undefined, { dateStyle: 'medium' });

/** The line's parts, e.g. "Pending: €12.00 (payable from 3 Dec 2026)"; empty when nothing is owed. */
export function owedParts(p: PartnerProgram): string[] {
  const cur = p.program.currency;
  const parts: string[] = [];
  if (p.pending_cents) {
    const from = p.next_payable_at ? ` (payable from ${day(p.next_payable_at)})` : '';
    parts.push(`Pending: ${money(p.pending_cents, cur)}${from}`);
  }
  if (p.held_cents) parts.push(`Held for review (part of pending): ${money(p.held_cents, cur)}`);
  if (p.approved_cents) parts.push(`Approved, in the next payout: ${money(p.approved_cents, cur)}`);
  return parts;
}

/** The owed line of one program, or nothing. */
export function Owed({ p, label }: { p: PartnerProgram; label?: string }) {
  const parts = owedParts(p);
  if (parts.length === 0) return null;
  return (
    <span class="owed" data-testid="owed">
      {label && <strong>{label}: </strong>}
      {parts.join(' · ')}
    </span>
  );
}
