// Who may reach a webhook endpoint or delivery (docs/webhooks.md, docs/security.md): the caller's access to
// the endpoint's workspace (another workspace's object is 404, as if it did not exist), and for a key
// limited to some programs, only the endpoints wholly inside its program_scope (others 404) and never a
// program_ids reaching past it (403 `API key is limited to programs <ids>`).
import { HttpError } from '../../../../shared/http/server.ts';
import type { Sql } from '../../../../shared/db/sql.ts';
import { principalOf, programScopeError, scopedWorkspaceAccess } from '../auth/access.ts';
import type { Permission, WorkspaceAccess } from '../auth/access.ts';
import * as dal from './dal.ts';
import { DELIVERY_NOT_FOUND, ENDPOINT_NOT_FOUND, endpointInScope, programIdsPastScope } from './service.ts';

export function createWebhookAccess(sql: Sql) {
  /**
   * The endpoint, after checking the caller may do `permission` in its workspace (else 404 or 403) and,
   * for a key limited to some programs, that the endpoint is wholly inside its scope (else 404).
   */
  async function endpointFor(req: { principal?: unknown }, id: number, permission: Permission) {
    const { row } = await scopedEndpoint(req, id, permission);
    return row;
  }
  async function scopedEndpoint(req: { principal?: unknown }, id: number, permission: Permission) {
    const row = await dal.findEndpoint(sql, id);
    if (!row) throw new HttpError(404, ENDPOINT_NOT_FOUND);
    const access = await accessTo(req, Number(row.workspace_id), permission, ENDPOINT_NOT_FOUND);
    if (!endpointInScope(row.program_ids, access.programScope)) throw new HttpError(404, ENDPOINT_NOT_FOUND);
    return { row, access };
  }

  /** 403 when a caller limited to some programs sends program_ids reaching past them. */
  function checkProgramIds(access: WorkspaceAccess, programIds: unknown): void {
    if (access.programScope !== null && programIdsPastScope(programIds, access.programScope))
      throw new HttpError(403, programScopeError(access.programScope));
  }

  async function accessTo(
    req: { principal?: unknown },
    workspaceId: number,
    permission: Permission,
    notFound: string,
  ): Promise<WorkspaceAccess> {
    try {
      return await scopedWorkspaceAccess(sql, principalOf(req as never), permission, workspaceId);
    } catch (err) {
      // Not a member of that workspace (or another key's): the object is not revealed.
      if (err instanceof HttpError && err.statusCode === 404) throw new HttpError(404, notFound);
      throw err;
    }
  }

  /** The delivery, after checking the caller may do `permission` in its endpoint's workspace. */
  async function deliveryFor(req: { principal?: unknown }, id: number, permission: Permission) {
    const row = await dal.findDelivery(sql, id);
    if (!row) throw new HttpError(404, DELIVERY_NOT_FOUND);
    const endpoint = await dal.findEndpoint(sql, Number(row.endpoint_id));
    if (!endpoint) throw new HttpError(404, DELIVERY_NOT_FOUND);
    const access = await accessTo(req, Number(endpoint.workspace_id), permission, DELIVERY_NOT_FOUND);
    if (!endpointInScope(endpoint.program_ids, access.programScope))
      throw new HttpError(404, DELIVERY_NOT_FOUND);
    return { row, endpoint };
  }

  return { endpointFor, scopedEndpoint, deliveryFor, checkProgramIds };
}
