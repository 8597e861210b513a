// Roles, permissions and key scopes (CONTRACT "Dashboard sessions, workspaces, roles" and "Management
// API keys"), and the request inputs auth checks before touching the database.
import t from 'tap';
import {
  ROLE_PERMISSIONS,
  checkKeyScopes,
  checkMembership,
  parseSignup,
  requestedWorkspace,
  scopeFor,
} from '../../services/api/modules/auth/service.ts';
import type { Permission, Role } from '../../services/api/modules/auth/service.ts';

const EVERY: Permission[] = [
  ...(['list', 'read', 'create', 'update', 'delete', 'go_live', 'regenerate-token'] as const).map(
    (a) => `program:${a}` as const,
  ),
  'dashboard:view',
  'tracking:read',
  'tracking:list',
];

t.test('what each role grants', async (t) => {
  const granted = (r: Role) => EVERY.filter((p) => ROLE_PERMISSIONS[r].has(p)).sort();
  t.same(granted('owner'), [...EVERY].sort());
  t.same(granted('admin'), [...EVERY].sort());
  t.same(granted('member'), [
    'dashboard:view',
    'program:list',
    'program:read',
    'tracking:list',
    'tracking:read',
  ]);
  t.same(granted('viewer'), ['dashboard:view', 'program:list', 'program:read', 'tracking:read']);
});

t.test('checkMembership: inactive first, then manage, then the role', async (t) => {
  t.doesNotThrow(() => checkMembership('viewer', 'active', 'tracking:read'));
  t.throws(() => checkMembership('viewer', 'active', 'tracking:list'), {
    statusCode: 403,
    message: 'Your role (viewer) lacks permission tracking:list',
  });
  t.throws(() => checkMembership('owner', 'inactive', 'dashboard:view'), {
    statusCode: 403,
    message: 'Your membership of this workspace is inactive',
  });
  t.doesNotThrow(() => checkMembership('admin', 'active', 'manage'));
  t.doesNotThrow(() => checkMembership('owner', 'active', 'manage'));
  for (const r of ['member', 'viewer'] as const) {
    t.throws(() => checkMembership(r, 'active', 'manage'), {
      statusCode: 403,
      message: 'Only owners and admins manage members and API keys',
    });
  }
});

t.test('key scopes: `*` allows all; tracking reads need dashboard:view', async (t) => {
  t.equal(scopeFor('tracking:list'), 'dashboard:view');
  t.equal(scopeFor('program:update'), 'program:update');
  t.doesNotThrow(() => checkKeyScopes(['*'], 'program:delete'));
  t.doesNotThrow(() => checkKeyScopes(['dashboard:view'], 'tracking:read'));
  t.throws(() => checkKeyScopes(['program:read'], 'tracking:read'), {
    statusCode: 403,
    message: 'API key lacks scope dashboard:view',
  });
  t.throws(() => checkKeyScopes(['program:read'], 'program:update'), {
    statusCode: 403,
    message: 'API key lacks scope program:update',
  });
});

t.test('requestedWorkspace: query first, body agrees or is absent', async (t) => {
  t.equal(requestedWorkspace({}), null);
  t.equal(requestedWorkspace({ workspace_id: '7' }), 7);
  t.equal(requestedWorkspace({}, { workspace_id: 7 }), 7);
  t.equal(requestedWorkspace({ workspace_id: '7' }, { workspace_id: 7 }), 7);
  t.equal(requestedWorkspace({ workspace_id: '7' }, { workspace_id: null }), 7);
  t.throws(() => requestedWorkspace({ workspace_id: '0' }), {
    statusCode: 400,
    message: 'workspace_id must be a positive integer',
  });
  t.throws(() => requestedWorkspace({}, { workspace_id: 1.5 }), {
    statusCode: 400,
    message: 'workspace_id must be a positive integer',
  });
  t.throws(() => requestedWorkspace({ workspace_id: '7' }, { workspace_id: 8 }), {
    statusCode: 400,
    message: 'workspace_id differs between the query string and the body',
  });
});

t.test('parseSignup: the checks and the default workspace name', async (t) => {
  t.same(parseSignup({ email: ' a@b.co ', password: '0123456789' }), {
    email: 'a@b.co',
    password: '0123456789',
    name: null,
    workspaceName: "a@b.co's workspace",
  });
  t.same(parseSignup({ email: 'a@b.co', password: '0123456789', name: ' Ann ', workspace_name: ' ' }), {
    email: 'a@b.co',
    password: '0123456789',
    name: 'Ann',
    workspaceName: "Ann's workspace",
  });
  t.throws(() => parseSignup([]), { statusCode: 400, message: 'Request body must be a JSON object' });
  t.throws(() => parseSignup({ email: 'nope', password: '0123456789' }), {
    message: 'email must be a valid email address',
  });
  t.throws(() => parseSignup({ email: 'a@b.co', password: '012345678' }), {
    message: 'password must be at least 10 characters',
  });
  t.throws(() => parseSignup({ email: 'a@b.co', password: 'x'.repeat(1025) }), {
    message: 'password must be at most 1024 characters',
  });
  t.throws(() => parseSignup({ email: 'a@b.co', password: '0123456789', name: 5 }), {
    message: 'name must be a string of at most 200 characters',
  });
});
