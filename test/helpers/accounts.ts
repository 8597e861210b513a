// Dashboard users for API tests: signup through the real API, memberships and keys as the API would make them.
import { randomBytes } from 'node:crypto';
import type { Sql } from '../../shared/db/sql.ts';
import { postJson } from './stack.ts';
import type { Services } from './stack.ts';

export interface User {
  userId: number;
  email: string;
  workspaceId: number;
  /** `sess_…` */
  session: string;
}

export const PASSWORD = 'correct horse battery';

export async function signup(
  svc: Pick<Services, 'baseUrl'>,
  opts: { email?: string; workspace?: string } = {},
): Promise<User> {
  const email = opts.email ?? `u-${randomBytes(5).toString('hex')}@example.com`;
  const r = await postJson(`${svc.baseUrl}/api/auth/signup`, {
    email,
    password: PASSWORD,
    name: 'Test User',
    workspace_name: opts.workspace ?? 'Test workspace',
  });
  if (r.status !== 201) throw new Error(`signup failed: ${r.status} ${JSON.stringify(r.body)}`);
  const data = r.body.data as { user: { id: number }; workspace: { id: number }; session_token: string };
  return { userId: data.user.id, email, workspaceId: data.workspace.id, session: data.session_token };
}

/** A second user, member of `workspaceId` with `role` (signed up through the API, then added). */
export async function memberOf(
  svc: Pick<Services, 'baseUrl'>,
  sql: Sql,
  workspaceId: number,
  role: 'owner' | 'admin' | 'member' | 'viewer',
): Promise<User> {
  const u = await signup(svc);
  await sql`insert into memberships (user_id, workspace_id, role) values (${u.userId}, ${workspaceId}, ${role})`;
  return { ...u, workspaceId };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export async function getJson(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { raw: text };
  }
  return { status: res.status, body, text };
}

export async function send(
  method: 'PUT' | 'DELETE' | 'POST' | 'PATCH',
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { raw: text };
  }
  return { status: res.status, body: parsed, text };
}
