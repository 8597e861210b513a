// Applying a page's groups, partners, links and codes (docs/importing.md "Mapping"), in the page's
// transaction. Groups are created and changed with the groups' own writers (shared/rewards/groups.ts),
// partners added with the partners' (shared/partners/membership.ts: one partner per workspace and email);
// links and codes are inserted a page at a time, their unique indexes deciding what is taken. Every row
// counts once: created, updated, skipped (unchanged, or not brought: with its error row) or failed.
import type { Tx } from '../db/sql.ts';
import { parsePolicy } from '../domain/commission-policy.ts';
import { parseDiscount } from '../domain/discount.ts';
import type { Discount } from '../domain/discount.ts';
import { createGroupIn, groupSlugCandidates, updateGroup } from '../rewards/groups.ts';
import { addPartner } from '../partners/membership.ts';
import { findRefs, fingerprint, saveRefs } from './refs.ts';
import type { ImportScope, PageResult } from './refs.ts';
import type { ImportOptions, SourceCode, SourceGroup, SourceLink, SourcePartner } from './types.ts';

const LINK_CODE = /^[A-Za-z0-9_-]{1,64}$/;
const PARTNER_CODE = /^[A-Za-z0-9_-]{3,32}$/;

/**
 * The group's discount, checked as the groups API checks one; a source that names only its Stripe coupon
 * (Rewardful's campaigns carry no terms) or whose terms do not pass gets a note and no discount.
 */
function discountOf(g: SourceGroup, r: PageResult): Discount | null {
  const note = (code: string, message: string) =>
    r.note({ kind: 'group', external_id: g.external_id, code, message: `${g.name}: ${message}` });
  if (g.discount !== null && g.discount !== undefined) {
    const d = parseDiscount(g.discount);
    if (typeof d !== 'string') return d;
    note('invalid_discount', `its discount was not imported (${d})`);
    return null;
  }
  if (g.stripe_coupon_id !== null)
    note(
      'discount_needs_terms',
      `Stripe coupon ${g.stripe_coupon_id}: the source does not say its terms; set the group's discount (type, amount, duration) on the Groups page`,
    );
  return null;
}

export async function applyGroups(tx: Tx, s: ImportScope, r: PageResult, groups: SourceGroup[]) {
  const refs = await findRefs(
    tx,
    s,
    'group',
    groups.map((g) => g.external_id),
  );
  const live = new Set(
    (
      await tx<{ id: string }[]>`
        select id from program_groups where program_id = ${s.programId} and deleted_at is null
          and id = any(${[...refs.values()].map((x) => x.local_id)}::bigint[])`
    ).map((g) => Number(g.id)),
  );
  const saved: { external_id: string; local_id: number; fingerprint: string }[] = [];
  for (const g of groups) {
    const policy = parsePolicy(g.commission);
    const hold = g.hold_days;
    if (typeof policy === 'string' || (hold !== null && (hold < 0 || hold > 365))) {
      r.error(
        {
          kind: 'group',
          external_id: g.external_id,
          code: 'invalid_terms',
          message: `${g.name}: ${typeof policy === 'string' ? policy : 'hold days must be 0 to 365'}`,
        },
        'failed',
      );
      continue;
    }
    const discount = discountOf(g, r);
    const fp = fingerprint([g.name, policy, hold, discount]);
    const ref = refs.get(g.external_id);
    if (ref && (live.has(ref.local_id) || s.dryRun)) {
      if (ref.fingerprint === fp) {
        r.count('group', 'skipped');
        continue;
      }
      if (!s.dryRun)
        await updateGroup(tx, ref.local_id, false, {
          name: g.name,
          commission: policy,
          hold_days: hold,
          ...(discount ? { discount } : {}),
        });
      saved.push({ external_id: g.external_id, local_id: ref.local_id, fingerprint: fp });
      r.count('group', 'updated');
      continue;
    }
    if (s.dryRun) {
      saved.push({ external_id: g.external_id, local_id: 0, fingerprint: fp });
      r.count('group', 'created');
      continue;
    }
    const id = await createGroupIn(
      tx,
      s.programId,
      { name: g.name, commission: policy, hold_days: hold, discount },
      groupSlugCandidates(undefined, g.name),
    );
    if (id === 'taken') {
      r.error(
        {
          kind: 'group',
          external_id: g.external_id,
          code: 'group_slug_taken',
          message: `${g.name}: every slug tried is taken`,
        },
        'failed',
      );
      continue;
    }
    saved.push({ external_id: g.external_id, local_id: Number(id), fingerprint: fp });
    r.count('group', 'created');
  }
  await saveRefs(tx, s, 'group', saved);
}

/** The group a partner joins: its source group's (imported), or the group with its slug (CSV). */
async function groupsOf(tx: Tx, s: ImportScope, partners: SourcePartner[]) {
  const byExternal = await findRefs(
    tx,
    s,
    'group',
    partners.flatMap((p) => (p.group && 'external_id' in p.group ? [p.group.external_id] : [])),
  );
  const slugs = partners.flatMap((p) => (p.group && 'slug' in p.group ? [p.group.slug] : []));
  const bySlug = new Map(
    slugs.length === 0
      ? []
      : (
          await tx<{ id: string; slug: string }[]>`
            select id, slug from program_groups
            where program_id = ${s.programId} and deleted_at is null and slug = any(${slugs}::text[])`
        ).map((g) => [g.slug, Number(g.id)]),
  );
  /** The group's id (null: the default group); undefined: a slug the program has no group for. */
  return (p: SourcePartner): number | null | undefined => {
    if (p.group === null) return null;
    if ('slug' in p.group) return bySlug.get(p.group.slug);
    // A campaign that was not brought (its terms failed) leaves its partners in the default group.
    const id = byExternal.get(p.group.external_id)?.local_id;
    return id === undefined || id === 0 ? null : id;
  };
}

export async function applyPartners(
  tx: Tx,
  s: ImportScope,
  r: PageResult,
  partners: SourcePartner[],
  options: ImportOptions,
) {
  const refs = await findRefs(
    tx,
    s,
    'partner',
    partners.map((p) => p.external_id),
  );
  const groupOf = await groupsOf(tx, s, partners);
  const saved: { external_id: string; local_id: number; fingerprint: string }[] = [];
  for (const p of partners) {
    const email = p.email.trim().toLowerCase();
    const fail = (code: string, message: string, outcome: 'failed' | 'skipped' = 'failed') =>
      r.error(
        { kind: 'partner', external_id: p.external_id, code, message: `${email}: ${message}` },
        outcome,
      );
    if (!p.active && !options.include_inactive) {
      fail(
        'inactive_partner',
        `not imported: ${p.inactive_reason ?? 'not active at the source'} (options.include_inactive brings it)`,
        'skipped',
      );
      continue;
    }
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 320) {
      fail('invalid_email', 'not an email address');
      continue;
    }
    const groupId = groupOf(p);
    if (groupId === undefined) {
      fail(
        'group_not_found',
        `the program has no group with slug ${JSON.stringify((p.group as { slug: string }).slug)}`,
      );
      continue;
    }
    const name = p.name.trim().slice(0, 200) || email;
    const fp = fingerprint([email, name]);
    const ref = refs.get(p.external_id);
    if (ref) {
      if (ref.fingerprint === fp) r.count('partner', 'skipped');
      else {
        if (!s.dryRun)
          await tx`
            update partners set name = ${name}
            where id = (select partner_id from partner_programs where id = ${ref.local_id})`;
        saved.push({ external_id: p.external_id, local_id: ref.local_id, fingerprint: fp });
        r.count('partner', 'updated');
      }
      continue;
    }
    if (s.workspaceId === null) {
      fail('program_without_workspace', 'the program belongs to no workspace');
      continue;
    }
    if (s.dryRun) {
      const [inProgram] = await tx`
        select 1 from partner_programs pp join partners pa on pa.id = pp.partner_id
        where pp.program_id = ${s.programId} and pa.workspace_id = ${s.workspaceId} and pa.email = ${email}`;
      saved.push({ external_id: p.external_id, local_id: 0, fingerprint: fp });
      r.count('partner', inProgram ? 'updated' : 'created');
      continue;
    }
    const added = await addPartner(tx, s.workspaceId, s.programId, {
      name,
      email,
      status: p.status,
      groupId,
    });
    if ('currencyConflict' in added) {
      fail(
        'currency_conflict',
        `earns in ${added.currencyConflict} in its other programs (a partner's programs share one currency)`,
      );
      continue;
    }
    if ('badGroup' in added) {
      fail('group_not_found', 'its group is no longer in the program');
      continue;
    }
    let ppId: number;
    if ('existing' in added) {
      // Already in the program (added by hand, or by another source): the import takes it as it is.
      const [pp] = await tx<{ id: string }[]>`
        select id from partner_programs where program_id = ${s.programId} and partner_id = ${added.existing.id}`;
      ppId = Number(pp!.id);
      r.count('partner', 'updated');
    } else {
      ppId = Number(added.pp.id);
      r.count('partner', 'created');
    }
    saved.push({ external_id: p.external_id, local_id: ppId, fingerprint: fp });
  }
  await saveRefs(tx, s, 'partner', saved);
}

/** The partner-programs (and their partners) of imported partners, by external id. */
export async function partnersOf(tx: Tx, s: ImportScope, externalIds: string[]) {
  const refs = await findRefs(tx, s, 'partner', externalIds);
  const ppIds = [...refs.values()].map((x) => x.local_id).filter((id) => id > 0);
  const rows =
    ppIds.length === 0
      ? []
      : await tx<{ id: string; partner_id: string; group_id: string }[]>`
          select id, partner_id, group_id from partner_programs where id = any(${ppIds}::bigint[])`;
  const byPp = new Map(rows.map((x) => [Number(x.id), x]));
  const out = new Map<string, { ppId: number; partnerId: number; groupId: number } | 'dry'>();
  for (const [ext, ref] of refs) {
    if (ref.local_id === 0) out.set(ext, 'dry');
    const row = byPp.get(ref.local_id);
    if (row)
      out.set(ext, { ppId: ref.local_id, partnerId: Number(row.partner_id), groupId: Number(row.group_id) });
  }
  return out;
}

const notImported = (what: string) =>
  `its partner was not imported (see the partner's error row) ${what}`.trim();

export async function applyLinks(tx: Tx, s: ImportScope, r: PageResult, links: SourceLink[]) {
  const partners = await partnersOf(
    tx,
    s,
    links.map((l) => l.partner_external_id),
  );
  const refs = await findRefs(
    tx,
    s,
    'link',
    links.map((l) => l.external_id),
  );
  const todo: (SourceLink & { pp: { ppId: number; partnerId: number } | 'dry' })[] = [];
  for (const l of links) {
    const fail = (code: string, message: string) =>
      r.error(
        { kind: 'link', external_id: l.external_id, code, message: `Link ${l.code}: ${message}` },
        'failed',
      );
    const pp = partners.get(l.partner_external_id);
    if (pp === undefined) fail('partner_not_found', notImported(''));
    else if (!LINK_CODE.test(l.code)) fail('invalid_link_code', 'a link code is 1 to 64 of A-Z a-z 0-9 _ -');
    else if (refs.has(l.external_id)) r.count('link', 'skipped');
    else todo.push({ ...l, pp });
  }
  if (todo.length === 0) return;
  const codes = todo.map((l) => l.code);
  const inserted = new Map<string, number>();
  if (!s.dryRun) {
    const real = todo.filter((l) => l.pp !== 'dry') as (SourceLink & {
      pp: { ppId: number; partnerId: number };
    })[];
    const got = await tx<{ id: string; short_link: string }[]>`
      insert into referral_links (short_link, program_id, partner_id, partner_program_id)
      select c, ${s.programId}, pa, pp from unnest(${real.map((l) => l.code)}::text[],
        ${real.map((l) => l.pp.partnerId)}::bigint[], ${real.map((l) => l.pp.ppId)}::bigint[]) as v(c, pa, pp)
      on conflict (short_link) do nothing
      returning id, short_link`;
    for (const g of got) inserted.set(g.short_link, Number(g.id));
  }
  const taken = new Map(
    (
      await tx<{ id: string; short_link: string; partner_program_id: string | null }[]>`
        select id, short_link, partner_program_id from referral_links
        where short_link = any(${codes}::text[])`
    ).map((x) => [x.short_link, x]),
  );
  const saved: { external_id: string; local_id: number; fingerprint: string }[] = [];
  for (const l of todo) {
    const mine = inserted.get(l.code);
    if (mine !== undefined) {
      saved.push({ external_id: l.external_id, local_id: mine, fingerprint: '' });
      r.count('link', 'created');
      continue;
    }
    const other = taken.get(l.code);
    if (other === undefined) {
      // Only a dry run gets here: the code is free.
      saved.push({ external_id: l.external_id, local_id: 0, fingerprint: '' });
      r.count('link', 'created');
    } else if (l.pp !== 'dry' && Number(other.partner_program_id) === l.pp.ppId) {
      // The partner has this link already (made by hand, or by an earlier import of another source).
      saved.push({ external_id: l.external_id, local_id: Number(other.id), fingerprint: '' });
      r.count('link', 'updated');
    } else {
      r.error(
        {
          kind: 'link',
          external_id: l.external_id,
          code: 'link_taken',
          message: `Link ${l.code}: the code is taken by another partner or program (link codes are unique)`,
        },
        'failed',
      );
    }
  }
  await saveRefs(tx, s, 'link', saved);
}

export async function applyCodes(tx: Tx, s: ImportScope, r: PageResult, codes: SourceCode[]) {
  const partners = await partnersOf(
    tx,
    s,
    codes.map((c) => c.partner_external_id),
  );
  const refs = await findRefs(
    tx,
    s,
    'code',
    codes.map((c) => c.external_id),
  );
  const todo: (SourceCode & { pp: { ppId: number; partnerId: number } | 'dry' })[] = [];
  for (const c of codes) {
    const fail = (code: string, message: string, outcome: 'failed' | 'skipped' = 'failed') =>
      r.error(
        { kind: 'code', external_id: c.external_id, code, message: `Code ${c.code}: ${message}` },
        outcome,
      );
    const pp = partners.get(c.partner_external_id);
    if (c.archived) fail('archived_coupon', 'archived at the source: not imported', 'skipped');
    else if (pp === undefined) fail('partner_not_found', notImported(''));
    else if (!PARTNER_CODE.test(c.code)) fail('invalid_code', 'a partner code is 3 to 32 of A-Z a-z 0-9 _ -');
    else if (refs.has(c.external_id)) r.count('code', 'skipped');
    else todo.push({ ...c, pp });
  }
  if (todo.length === 0) return;
  const ids = (c: SourceCode) => JSON.stringify(c.stripe_id === null ? {} : { stripe: c.stripe_id });
  const inserted = new Map<string, number>();
  if (!s.dryRun) {
    const real = todo.filter((c) => c.pp !== 'dry') as (SourceCode & {
      pp: { ppId: number; partnerId: number };
    })[];
    const got = await tx<{ id: string; code: string }[]>`
      insert into partner_codes (program_id, partner_id, partner_program_id, code, processor_ids)
      select ${s.programId}, pa, pp, c, ids::jsonb from unnest(${real.map((c) => c.code)}::text[],
        ${real.map((c) => c.pp.partnerId)}::bigint[], ${real.map((c) => c.pp.ppId)}::bigint[],
        ${real.map(ids)}::text[]) as v(c, pa, pp, ids)
      on conflict do nothing
      returning id, code`;
    for (const g of got) inserted.set(g.code.toLowerCase(), Number(g.id));
  }
  const existing = new Map(
    (
      await tx<{ id: string; code: string; partner_program_id: string }[]>`
        select id, code, partner_program_id from partner_codes
        where program_id = ${s.programId} and lower(code) = any(${todo.map((c) => c.code.toLowerCase())}::text[])`
    ).map((x) => [x.code.toLowerCase(), x]),
  );
  const saved: { external_id: string; local_id: number; fingerprint: string }[] = [];
  for (const c of todo) {
    const key = c.code.toLowerCase();
    const mine = inserted.get(key);
    const other = existing.get(key);
    if (mine !== undefined) {
      saved.push({ external_id: c.external_id, local_id: mine, fingerprint: '' });
      r.count('code', 'created');
    } else if (other === undefined && s.dryRun) {
      saved.push({ external_id: c.external_id, local_id: 0, fingerprint: '' });
      r.count('code', 'created');
    } else if (other !== undefined && c.pp !== 'dry' && Number(other.partner_program_id) === c.pp.ppId) {
      saved.push({ external_id: c.external_id, local_id: Number(other.id), fingerprint: '' });
      r.count('code', 'updated');
    } else {
      r.error(
        {
          kind: 'code',
          external_id: c.external_id,
          code: 'code_taken',
          message: `Code ${c.code}: another partner of the program has this code${c.stripe_id ? ' or this Stripe promotion code' : ''}`,
        },
        'failed',
      );
    }
  }
  await saveRefs(tx, s, 'code', saved);
}
