// API key inputs: name, scopes, program_scope ids and expiry, each rejected with its own message.
import t from 'tap';
import {
  checkProgramsFound,
  parseExpiresAt,
  parseName,
  parseProgramIds,
  parseScopes,
} from '../../services/api/modules/api-keys/service.ts';

t.test('name and scopes', async (t) => {
  t.equal(parseName('  ci  '), 'ci');
  t.throws(() => parseName(null), { statusCode: 400, message: 'name is required' });
  t.throws(() => parseName('   '), {
    statusCode: 400,
    message: 'name must be a string of 1 to 200 characters',
  });
  t.same(parseScopes(['program:read', 'program:read', '*']), ['program:read', '*'], 'deduplicated');
  t.throws(() => parseScopes([]), {
    statusCode: 400,
    message: 'scopes must be a non-empty array of strings',
  });
  t.throws(() => parseScopes(['program:fly']), {
    statusCode: 400,
    message: /^Unknown scope: program:fly\. Allowed: \*, program:list/,
  });
});

t.test('program_scope ids', async (t) => {
  t.equal(parseProgramIds(null), null);
  t.same(parseProgramIds(['3', 3, 4]), [3, 4], 'strings or integers, deduplicated');
  t.throws(() => parseProgramIds([]), {
    statusCode: 400,
    message: 'program_scope must be null or a non-empty array of program ids',
  });
  t.throws(() => parseProgramIds([1, 'x']), {
    statusCode: 400,
    message: 'program_scope has an invalid program id: "x"',
  });
  t.doesNotThrow(() => checkProgramsFound([3, 4], new Set([3, 4, 5])));
  t.throws(() => checkProgramsFound([3, 4, 6], new Set([3])), {
    statusCode: 400,
    message: 'program_scope: program 4, 6 not found in this workspace',
  });
});

t.test('expires_at: a future ISO 8601 date-time with a zone', async (t) => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  t.equal(parseExpiresAt(undefined, now), null);
  t.same(parseExpiresAt('2026-01-02T00:00:00+01:00', now), new Date('2026-01-01T23:00:00Z'));
  t.throws(() => parseExpiresAt('2026-01-02', now), {
    statusCode: 400,
    message: 'expires_at must be an ISO 8601 datetime with a time zone, or null',
  });
  t.throws(() => parseExpiresAt('2026-01-01T00:00:00Z', now), {
    statusCode: 400,
    message: 'expires_at must be in the future',
  });
});
