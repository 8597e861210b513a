// The balance rule: credits in full; an unpaid commission's deduction stops at zero of what its commission holds (its
// room); a paid one's does not.
import t from 'tap';
import { movement } from '../../shared/ledger/rules.ts';

t.test('a credit is applied in full, clamped or not', async (t) => {
  t.equal(movement(0n, 500n, true), 500n);
  t.equal(movement(-200n, 500n, false), 500n);
});

t.test('a clamped deduction stops at zero and takes nothing from a room at or below zero', async (t) => {
  t.equal(movement(1000n, -300n, true), -300n, 'within the room: in full');
  t.equal(movement(200n, -300n, true), -200n, 'beyond the room: down to zero');
  t.equal(movement(0n, -300n, true), 0n);
  t.equal(movement(-50n, -300n, true), 0n);
});

t.test('an unclamped deduction (a paid commission) is applied in full and may go negative', async (t) => {
  t.equal(movement(200n, -300n, false), -300n);
  t.equal(movement(-50n, -300n, false), -300n);
});
