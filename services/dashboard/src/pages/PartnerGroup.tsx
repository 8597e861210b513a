// A partner's place in the program's rewards (CONTRACT part four), on the Partners page: its group with the
// lock (tier rules do not move a locked partner), changed with the group picker (PUT …/partners/:id/group),
// and its own commission, which wins over its group's (PUT …/partners/:id/commission, the one policy editor).
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { Answer } from '../api.ts';
import { ConfirmButton, ErrorBox, SubmitCancel } from '../widgets.tsx';
import { messageOf, useAction } from '../hooks.ts';
import type { Program } from '../program.tsx';
import type { Group } from '../groups.ts';
import { policyText, productRulesText } from '../policy.ts';
import { PolicyFields, policyBody, policyInput } from './PolicyFields.tsx';
import type { PolicyInput } from './PolicyFields.tsx';
import './rewards.css';

type Partner = Answer<'get', '/api/advertiser/affiliate-programs/{id}/partners'>['data'][number];

/** The Group cell: the group, "locked", and (owners, admins) Change group with its picker. */
export function GroupCell(props: {
  programId: number;
  partner: Partner;
  groups: Group[] | null;
  canWrite: boolean;
  onChanged(): void;
}) {
  const p = props.partner;
  const [picking, setPicking] = useState(false);
  return (
    <div class="group-cell" data-testid="partner-group">
      <span>{p.group.name}</span>
      {p.group_locked && (
        <>
          {' '}
          <span class="badge locked" title="Tier rules do not move this partner">
            locked
          </span>
        </>
      )}
      {props.canWrite &&
        props.groups &&
        (picking ? (
          <GroupPicker
            programId={props.programId}
            partner={p}
            groups={props.groups}
            onCancel={() => setPicking(false)}
            onSaved={() => {
              setPicking(false);
              props.onChanged();
            }}
          />
        ) : (
          <div>
            <button type="button" onClick={() => setPicking(true)}>
              Change group<span class="sr-only"> of {p.name}</span>
            </button>
          </div>
        ))}
    </div>
  );
}

function GroupPicker(props: {
  programId: number;
  partner: Partner;
  groups: Group[];
  onCancel(): void;
  onSaved(): void;
}) {
  const p = props.partner;
  const [groupId, setGroupId] = useState(String(p.group.id));
  const [locked, setLocked] = useState(p.group_locked);
  const save = useAction();
  const select = useRef<HTMLSelectElement>(null);
  useLayoutEffect(() => select.current?.focus(), []);
  return (
    <form
      class="picker"
      aria-label={`Group of ${p.name}`}
      onKeyDown={(e) => {
        if (e.key === 'Escape') props.onCancel();
      }}
      onSubmit={(e) => {
        e.preventDefault();
        void save
          .run(async () => {
            await api.PUT('/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/group', {
              params: { path: { id: props.programId, partnerId: p.id } },
              body: { group_id: Number(groupId), locked },
            });
          })
          .then((ok) => ok && props.onSaved());
      }}
    >
      <label class="compact">
        Group
        <select
          ref={select}
          value={groupId}
          onChange={(e) => setGroupId((e.target as HTMLSelectElement).value)}
        >
          {props.groups.map((g) => (
            <option value={String(g.id)}>{g.name}</option>
          ))}
        </select>
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={locked}
          onChange={(e) => setLocked((e.target as HTMLInputElement).checked)}
        />
        Lock <span class="subtle">(tier rules do not move them)</span>
      </label>
      <span class="row-actions">
        <button type="submit" class="primary" disabled={save.busy}>
          Save<span class="sr-only"> group of {p.name}</span>
        </button>
        <button type="button" disabled={save.busy} onClick={props.onCancel}>
          Cancel
        </button>
      </span>
      <ErrorBox error={save.error} />
    </form>
  );
}

/** The partner's own commission: what it earns, set, change or remove it (owners, admins). */
export function PartnerCommission(props: {
  program: Program;
  partner: Partner;
  groups: Group[] | null;
  canWrite: boolean;
  onChanged(): void;
}) {
  const { program, partner: p } = props;
  const [editing, setEditing] = useState(false);
  const save = useAction();
  const group = props.groups?.find((g) => g.id === p.group.id);
  const own = p.commission_override;
  const put = (commission: PolicyInput | null) =>
    api.PUT('/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/commission', {
      params: { path: { id: program.id, partnerId: p.id } },
      body: { commission: commission === null ? null : policyBody(commission) },
    });
  return (
    <section class="own-commission" aria-label={`Commission of ${p.name}`}>
      <h2>Commission of {p.name}</h2>
      {own ? (
        <p>
          Own commission: <strong>{policyText(own, program.currency)}</strong>
          {own.product_rules.length > 0 && <> · per product: {productRulesText(own, program.currency)}</>}. It
          wins over {p.group.name}'s.
        </p>
      ) : (
        <p>
          Earns {p.group.name}'s commission
          {group && <>: {policyText(group.commission, program.currency)}</>}.
        </p>
      )}
      {props.canWrite &&
        (editing ? (
          <OwnCommissionForm
            partner={p}
            initial={policyInput(own ?? group?.commission ?? program.commission)}
            busy={save.busy}
            error={save.error}
            onCancel={() => {
              save.setError(null);
              setEditing(false);
            }}
            onSave={(v) => {
              try {
                policyBody(v);
              } catch (err) {
                save.setError(messageOf(err));
                return;
              }
              void save
                .run(() => put(v))
                .then((ok) => {
                  if (!ok) return;
                  setEditing(false);
                  props.onChanged();
                });
            }}
          />
        ) : (
          <p class="actions">
            <button type="button" onClick={() => setEditing(true)}>
              {own ? 'Change own commission' : 'Set an own commission'}
              <span class="sr-only"> of {p.name}</span>
            </button>
            {own && (
              <ConfirmButton
                label="Remove own commission"
                question={`Remove ${p.name}'s own commission? Sales decided from now on earn ${p.group.name}'s.`}
                confirmLabel="Yes, remove"
                onConfirm={async () => {
                  await put(null);
                  props.onChanged();
                }}
              />
            )}
          </p>
        ))}
    </section>
  );
}

function OwnCommissionForm(props: {
  partner: Partner;
  initial: PolicyInput;
  busy: boolean;
  error: string | null;
  onSave(v: PolicyInput): void;
  onCancel(): void;
}) {
  const [v, setV] = useState(props.initial);
  return (
    <form
      class="panel"
      aria-label={`Own commission of ${props.partner.name}`}
      onKeyDown={(e) => {
        if (e.key === 'Escape') props.onCancel();
      }}
      onSubmit={(e) => {
        e.preventDefault();
        props.onSave(v);
      }}
    >
      <p class="note">It prices the sales decided from now on; no commission already made changes.</p>
      <PolicyFields value={v} onChange={setV} legend="Own commission" />
      <ErrorBox error={props.error} />
      <SubmitCancel busy={props.busy} label="Save own commission" onCancel={props.onCancel} />
    </form>
  );
}
