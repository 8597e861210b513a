// Groups (CONTRACT part four): a program's groups of partners with their commission (the one policy editor,
// PolicyFields.tsx), hold and auto-approval when they differ from the program's, how many partners each has
// and the discount for the customers they bring (DiscountFields.tsx); create, edit and delete (its partners
// move to the default group). Below them the tier ladder (TierLadder.tsx) that moves partners up as they sell,
// and the bonuses with their progress (Bonuses.tsx).
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { useGroups } from '../groups.ts';
import type { Group } from '../groups.ts';
import { api, ApiError } from '../api.ts';
import type { RequestBody } from '../api.ts';
import { useSession } from '../session.tsx';
import { ConfirmButton, ErrorBox, ReadOnlyNote, Show, SubmitCancel, Table } from '../widgets.tsx';
import { programPage } from '../program.tsx';
import type { Program } from '../program.tsx';
import { messageOf, useAction } from '../hooks.ts';
import { policyText, productRulesText } from '../policy.ts';
import { PolicyFields, policyBody, policyInput } from './PolicyFields.tsx';
import { TierLadder } from './TierLadder.tsx';
import { publicPageUrl } from './ProgramPartnerFields.tsx';
import { Bonuses } from './Bonuses.tsx';
import {
  DiscountFields,
  discountBody,
  discountInput,
  discountProcessors,
  discountText,
} from './DiscountFields.tsx';
import './rewards.css';

type GroupBody = RequestBody<'post', '/api/advertiser/affiliate-programs/{id}/groups'>;

export const Groups = programPage('Groups', GroupsOf);

function GroupsOf({ program }: { program: Program }) {
  const { canWrite } = useSession();
  // Bumped by every change: a deleted group also takes its tier rules with it.
  const [tick, setTick] = useState(0);
  const groups = useGroups(program.id, [tick]);
  const [form, setForm] = useState<'new' | Group | null>(null);
  const changed = () => {
    setForm(null);
    setTick((n) => n + 1);
  };

  return (
    <>
      <p class="lede">
        Each partner earns by their group's commission; the default group's is the program's own. A partner's
        own commission (on Partners) wins over its group's. Changes price the sales decided from then on: no
        commission already made changes.
      </p>
      {canWrite ? (
        form === null && (
          <p>
            <button type="button" class="primary" onClick={() => setForm('new')}>
              New group
            </button>
          </p>
        )
      ) : (
        <ReadOnlyNote>Your role can view groups; owners and admins change them.</ReadOnlyNote>
      )}
      {form !== null && (
        <GroupForm
          program={program}
          group={form === 'new' ? null : form}
          onCancel={() => setForm(null)}
          onSaved={changed}
        />
      )}
      <section aria-labelledby="groups-heading">
        <h2 id="groups-heading">What each group earns</h2>
        <Show loaded={groups}>
          {(list) => (
            <GroupTable
              program={program}
              groups={list}
              canWrite={canWrite}
              onEdit={(g) => setForm(g)}
              onDeleted={changed}
            />
          )}
        </Show>
      </section>
      <Show loaded={groups}>
        {(list) => (
          <>
            <TierLadder program={program} groups={list} canWrite={canWrite} tick={tick} />
            <Bonuses program={program} groups={list} canWrite={canWrite} />
          </>
        )}
      </Show>
    </>
  );
}

/** "30 days" or "14 days (own)"; "reviewed" or "approved at once", "(program's)" when it follows the program. */
function holdText(g: Group, program: Program): string {
  const days = g.hold_days ?? program.hold_days ?? 30;
  return `${days} ${days === 1 ? 'day' : 'days'}${g.hold_days === null ? " (program's)" : ''}`;
}
function approvalText(g: Group, program: Program): string {
  const auto = g.auto_approve ?? program.auto_approve ?? false;
  return `${auto ? 'approved at once' : 'reviewed'}${g.auto_approve === null ? " (program's)" : ''}`;
}

/** The public page's address whose applicants join the group (the default group's: the page itself). */
function applicationUrl(program: Program, g: Group): string {
  const page = publicPageUrl(program.slug);
  return g.is_default ? page : `${page}?group=${encodeURIComponent(g.slug)}`;
}

function GroupTable(props: {
  program: Program;
  groups: Group[];
  canWrite: boolean;
  onEdit(g: Group): void;
  onDeleted(): void;
}) {
  const { program, groups } = props;
  const dflt = groups.find((g) => g.is_default);
  return (
    <Table
      caption={`Groups of ${program.name}`}
      hiddenCaption
      class="groups"
      columns={[
        'Group',
        'Commission',
        'Hold',
        'Applications',
        'Partners',
        'Discount',
        props.canWrite && 'Actions',
      ]}
    >
      {groups.map((g) => (
        <tr key={g.id} data-group={g.slug}>
          <td>
            <strong>{g.name}</strong> {g.is_default && <span class="badge">default</span>}
            <br />
            <span class="muted">
              slug <code>{g.slug}</code>
            </span>
            {program.public_page && (
              <>
                <br />
                <a class="muted" href={applicationUrl(program, g)}>
                  Application page<span class="sr-only"> for {g.name}</span>
                </a>
              </>
            )}
          </td>
          <td>
            {policyText(g.commission, program.currency)}
            {g.commission.product_rules.length > 0 && (
              <>
                <br />
                <span class="muted">Per product: {productRulesText(g.commission, program.currency)}</span>
              </>
            )}
          </td>
          <td>{holdText(g, program)}</td>
          <td>{approvalText(g, program)}</td>
          <td data-testid="group-partners">{g.partners}</td>
          <td data-testid="group-discount">
            {discountText(g.discount, program.currency)}
            {discountProcessors(g.discount) && (
              <>
                <br />
                <span class="muted">{discountProcessors(g.discount)}</span>
              </>
            )}
          </td>
          {props.canWrite && (
            <td class="actions">
              <button type="button" onClick={() => props.onEdit(g)}>
                Edit<span class="sr-only"> {g.name}</span>
              </button>
              <ConfirmButton
                label={`Delete ${g.name}`}
                danger
                question={
                  g.is_default
                    ? `Delete ${g.name}?`
                    : `Delete ${g.name}? Its ${g.partners === 1 ? 'partner moves' : `${g.partners} partners move`} to ${dflt?.name ?? 'the default group'}; commissions made so far stay as they are; tier rules from or to it are removed.`
                }
                confirmLabel="Yes, delete"
                onConfirm={async () => {
                  try {
                    await api.DELETE('/api/advertiser/affiliate-programs/{id}/groups/{groupId}', {
                      params: { path: { id: program.id, groupId: g.id } },
                    });
                  } catch (e) {
                    // The 409: say why, and what to do instead.
                    if (e instanceof ApiError && e.status === 409 && g.is_default) {
                      throw new Error(
                        `${e.message}: it holds the program's own commission and every partner not placed in ` +
                          'another group. Change its commission with Edit, or move partners on the Partners page.',
                      );
                    }
                    throw e;
                  }
                  props.onDeleted();
                }}
              />
            </td>
          )}
        </tr>
      ))}
    </Table>
  );
}

type Approval = 'program' | 'auto' | 'review';

function GroupForm(props: { program: Program; group: Group | null; onCancel(): void; onSaved(): void }) {
  const { program, group } = props;
  const [name, setName] = useState(group?.name ?? '');
  const [slug, setSlug] = useState(group?.slug ?? '');
  // A new group starts from the program's policy (the API's default too).
  const [policy, setPolicy] = useState(policyInput(group?.commission ?? program.commission));
  const [hold, setHold] = useState(group?.hold_days === null || !group ? '' : String(group.hold_days));
  const [approval, setApproval] = useState<Approval>(
    group?.auto_approve == null ? 'program' : group.auto_approve ? 'auto' : 'review',
  );
  const [discount, setDiscount] = useState(discountInput(group?.discount));
  const submit = useAction();
  const nameRef = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => nameRef.current?.focus(), [group?.id]);
  const title = group ? `Edit ${group.name}` : 'New group';
  const programHold = program.hold_days ?? 30;

  const body = (): GroupBody => {
    const h = hold.trim();
    if (h !== '' && !/^-?\d+$/.test(h))
      throw new Error('Hold period: enter a whole number of days, or leave empty');
    const out: GroupBody = {
      name,
      commission: policyBody(policy),
      hold_days: h === '' ? null : Number(h),
      auto_approve: approval === 'program' ? null : approval === 'auto',
      discount: discountBody(discount),
    };
    if (slug.trim()) out.slug = slug.trim();
    return out;
  };

  return (
    <form
      class="panel"
      aria-label={title}
      onKeyDown={(e) => {
        if (e.key === 'Escape') props.onCancel();
      }}
      onSubmit={(e) => {
        e.preventDefault();
        let b: GroupBody;
        try {
          b = body();
        } catch (err) {
          submit.setError(messageOf(err));
          return;
        }
        void submit
          .run(async () => {
            if (group) {
              await api.PUT('/api/advertiser/affiliate-programs/{id}/groups/{groupId}', {
                params: { path: { id: program.id, groupId: group.id } },
                body: b,
              });
            } else {
              await api.POST('/api/advertiser/affiliate-programs/{id}/groups', {
                params: { path: { id: program.id } },
                body: b,
              });
            }
          })
          .then((ok) => ok && props.onSaved());
      }}
    >
      <h2>{title}</h2>
      {group?.is_default && (
        <p class="note">
          The default group's commission is the program's: saving here changes the program's too.
        </p>
      )}
      <div class="grid">
        <label>
          Group name
          <input
            ref={nameRef}
            value={name}
            required
            maxLength={100}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Slug <span class="subtle">(optional: made from the name; for ?group= on the public page)</span>
          <input value={slug} onInput={(e) => setSlug((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Hold period (days) <span class="subtle">(empty: the program's, {programHold})</span>
          <input
            type="number"
            step={1}
            value={hold}
            onInput={(e) => setHold((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Applications naming this group
          <select
            value={approval}
            onChange={(e) => setApproval((e.target as HTMLSelectElement).value as Approval)}
          >
            <option value="program">
              As the program ({program.auto_approve ? 'approved at once' : 'reviewed'})
            </option>
            <option value="auto">Approved at once</option>
            <option value="review">Reviewed</option>
          </select>
        </label>
      </div>
      <PolicyFields value={policy} onChange={setPolicy} />
      <DiscountFields value={discount} currency={program.currency} onChange={setDiscount} />
      <ErrorBox error={submit.error} />
      <SubmitCancel
        busy={submit.busy}
        label={group ? 'Save group' : 'Create group'}
        onCancel={props.onCancel}
      />
    </form>
  );
}
