// Settings of the selected workspace: members, API keys and outbound webhooks (owner/admin only, as the API
// decides) and the payment-processor connection with its webhook URLs, signing secret and the events it
// received. Each section is its own file under settings/.
import { Fragment } from 'preact';
import { useSession } from '../session.tsx';
import { ReadOnlyNote } from '../widgets.tsx';
import { useWorkspacePrograms } from '../program.tsx';
import { Members } from './settings/Members.tsx';
import { ApiKeys } from './settings/ApiKeys.tsx';
import { Processor } from './settings/Processor.tsx';
import { Processors } from './settings/Processors.tsx';
import { Webhooks } from './settings/Webhooks.tsx';
import { OTHER_PROCESSORS, PROCESSOR_TITLES } from '../processors.ts';

export function Settings() {
  const { info, workspaceId, canWrite, role } = useSession();
  const workspace = info.workspaces.find((w) => w.id === workspaceId);
  const programs = useWorkspacePrograms(workspaceId);
  return (
    <>
      <h1>Settings</h1>
      <p class="lede">
        Workspace {workspace?.name ?? `#${workspaceId}`} · your role: {role}
      </p>
      <nav class="toc" aria-label="Settings sections">
        <a href="#members">Members</a> <a href="#api-keys">API keys</a>{' '}
        <a href="#processor">Payment processor</a>{' '}
        {OTHER_PROCESSORS.map((p) => (
          <Fragment key={p}>
            <a href={`#${p}`}>{PROCESSOR_TITLES[p]}</a>{' '}
          </Fragment>
        ))}
        <a href="#webhooks">Webhooks</a>
      </nav>
      {canWrite ? (
        <>
          <Members key={`m${workspaceId}`} />
          <ApiKeys key={`k${workspaceId}`} programs={programs.data ?? []} />
        </>
      ) : (
        <>
          <section id="members" aria-labelledby="members-h">
            <h2 id="members-h">Members</h2>
            <ReadOnlyNote>Only owners and admins of this workspace manage its members.</ReadOnlyNote>
          </section>
          <section id="api-keys" aria-labelledby="api-keys-h">
            <h2 id="api-keys-h">API keys</h2>
            <ReadOnlyNote>Only owners and admins of this workspace manage its API keys.</ReadOnlyNote>
          </section>
        </>
      )}
      <Processor key={`p${workspaceId}`} programs={programs} />
      <Processors key={`ps${workspaceId}`} programs={programs} />
      {canWrite ? (
        <Webhooks key={`w${workspaceId}`} programs={programs.data ?? []} />
      ) : (
        <section id="webhooks" aria-labelledby="webhooks-h">
          <h2 id="webhooks-h">Webhooks</h2>
          <ReadOnlyNote>Only owners and admins of this workspace see and manage its webhooks.</ReadOnlyNote>
        </section>
      )}
    </>
  );
}
