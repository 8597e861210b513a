// The refund deduction: proportional to the refunded share, round half up; whole sale or more is full.
import t from 'tap';
import { refundDeduction } from '../../shared/domain/refund.ts';

t.test('no stated amount, the whole sale, or more than the sale: the full commission', async (t) => {
  t.same(refundDeduction(3000, 10_000, null), { deduction: 3000, full: true });
  t.same(refundDeduction(3000, 10_000, 10_000), { deduction: 3000, full: true });
  t.same(refundDeduction(3000, 10_000, 25_000), { deduction: 3000, full: true }, 'clamped to the sale');
});

t.test('a partial refund deducts commission × refund / sale, round half up', async (t) => {
  t.same(refundDeduction(3000, 10_000, 2500), { deduction: 750, full: false });
  t.same(refundDeduction(1, 2, 1), { deduction: 1, full: false }, '0.5 cents rounds up');
  t.same(refundDeduction(1, 3, 1), { deduction: 0, full: false }, '0.33 cents rounds down');
  t.same(refundDeduction(999, 10_000, 9_999), { deduction: 999, full: false }, '998.9 → 999, still partial');
});
