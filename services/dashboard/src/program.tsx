// A program page's frame: the program (its name and currency) loaded once per id, the page title, and the
// programs of the selected workspace.
import { useEffect } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { api } from './api.ts';
import type { Answer, RequestBody } from './api.ts';
import { useLoad } from './hooks.ts';
import type { Loaded } from './hooks.ts';
import { Show } from './widgets.tsx';

/** A program as the management API answers it. */
export type Program = Answer<'get', '/api/advertiser/affiliate-programs/{id}'>['data'];

/** What the program form sends: the fields of an update, with the name (a create needs it). */
export type ProgramFields = RequestBody<'put', '/api/advertiser/affiliate-programs/{id}'> & { name: string };

/** The program of a program page (its name and currency), loaded once per id. */
export function useProgram(programId: number): Loaded<Program> {
  return useLoad(
    async () =>
      (await api.GET('/api/advertiser/affiliate-programs/{id}', { params: { path: { id: programId } } }))
        .data,
    [programId],
  );
}

/** What a program page gets from the route table (app.tsx): the program's id from the path. */
export interface ProgramPageProps {
  programId: number;
}

/** A page of one program: its heading, then `Body` once the program is loaded (or the error). */
export function programPage(title: string, Body: (props: { program: Program }) => ComponentChildren) {
  return function ProgramPage({ programId }: ProgramPageProps) {
    const program = useProgram(programId);
    return (
      <>
        <h1>{title}</h1>
        <Show loaded={program}>{(p) => <Body program={p} />}</Show>
      </>
    );
  };
}

/** The page's title line: the page name and, when known, the program's. */
export function PageTitle(props: { title: string; program?: Program | null }) {
  useEffect(() => {
    document.title = props.program ? `${props.title} · ${props.program.name} · svc` : `${props.title} · svc`;
  }, [props.title, props.program?.name]);
  return (
    <h1>
      {props.title}
      {props.program && <span class="subtle"> · {props.program.name}</span>}
    </h1>
  );
}

/** The programs of one workspace (the list route returns those of every workspace the user is in). */
export function useWorkspacePrograms(workspaceId: number): Loaded<Program[]> {
  return useLoad(
    async () =>
      (await api.GET('/api/advertiser/affiliate-programs')).data.filter(
        (p) => p.workspace_id === workspaceId,
      ),
    [workspaceId],
  );
}
