import t from 'tap';
import { ipHasher } from '../../shared/domain/ip-hash.ts';

t.test(
  'an IP hash is keyed, stable, and the same for an IPv4 address and its IPv6-mapped form',
  async (t) => {
    const a = ipHasher(Buffer.alloc(32, 1));
    const b = ipHasher(Buffer.alloc(32, 2));
    t.equal(a('203.0.113.7'), a('203.0.113.7'));
    t.equal(a('::ffff:203.0.113.7'), a('203.0.113.7'));
    t.not(a('203.0.113.7'), a('203.0.113.8'));
    t.not(a('203.0.113.7'), b('203.0.113.7'), 'another installation key, another hash');
    t.not(a('203.0.113.7'), '203.0.113.7');
    t.equal(a(null), null);
    t.equal(a(''), null);
  },
);
