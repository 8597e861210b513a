// Membership rules beyond the contract: only an owner touches the owner role, the last active owner
// stays, and demoted or removed members keep no API keys.
import t from 'tap';
import * as members from '../../services/api/modules/members/service.ts';

const { LAST_OWNER, OWNER_ONLY, checkRemoval, checkRoleChange, keepsNoKeys, parseRole, parseUserId } =
  members;

const active = (role: 'owner' | 'admin' | 'member' | 'viewer') => ({ role, status: 'active' as const });

t.test('role changes', async (t) => {
  t.equal(checkRoleChange({ actor: 'admin', current: active('member'), lastOwner: false }, 'viewer'), true);
  t.equal(
    checkRoleChange({ actor: 'admin', current: active('member'), lastOwner: false }, 'member'),
    false,
    'the same role changes nothing',
  );
  t.throws(() => checkRoleChange({ actor: 'admin', current: active('member'), lastOwner: false }, 'owner'), {
    statusCode: 403,
    message: OWNER_ONLY,
  });
  t.throws(() => checkRoleChange({ actor: 'admin', current: active('owner'), lastOwner: false }, 'admin'), {
    statusCode: 403,
    message: OWNER_ONLY,
  });
  t.equal(checkRoleChange({ actor: 'owner', current: active('owner'), lastOwner: false }, 'admin'), true);
  t.throws(() => checkRoleChange({ actor: 'owner', current: active('owner'), lastOwner: true }, 'admin'), {
    statusCode: 409,
    message: LAST_OWNER,
  });
  t.throws(
    () =>
      checkRoleChange(
        { actor: 'owner', current: { role: 'member', status: 'inactive' }, lastOwner: false },
        'admin',
      ),
    { statusCode: 409, message: 'Member is inactive; add them again with POST /api/advertiser/members' },
  );
});

t.test('removals', async (t) => {
  t.equal(checkRemoval({ actor: 'admin', current: active('viewer'), lastOwner: false }), true);
  t.equal(
    checkRemoval({ actor: 'admin', current: { role: 'owner', status: 'inactive' }, lastOwner: false }),
    false,
    'an inactive member stays as it is, whoever asks',
  );
  t.throws(() => checkRemoval({ actor: 'admin', current: active('owner'), lastOwner: false }), {
    statusCode: 403,
    message: OWNER_ONLY,
  });
  t.throws(() => checkRemoval({ actor: 'owner', current: active('owner'), lastOwner: true }), {
    statusCode: 409,
    message: LAST_OWNER,
  });
});

t.test('who keeps API keys; role and user id inputs', async (t) => {
  t.same((['owner', 'admin', 'member', 'viewer'] as const).filter(keepsNoKeys), ['member', 'viewer']);
  t.equal(parseRole('viewer'), 'viewer');
  t.throws(() => parseRole(undefined), { statusCode: 400, message: 'role is required' });
  t.throws(() => parseRole('root'), {
    statusCode: 400,
    message: 'role must be one of owner, admin, member, viewer',
  });
  t.equal(parseUserId('12'), 12);
  t.throws(() => parseUserId('0'), { statusCode: 400, message: 'userId must be a positive integer' });
});
