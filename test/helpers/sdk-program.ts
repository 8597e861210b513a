// What the SDK tests start from, made through the TypeScript SDK itself as an advertiser would: a signed-up
// owner (session), a live program paying 30 %, a management key, and a partner with one referral link.
import { randomBytes } from 'node:crypto';
import { Svc } from '../../sdk/typescript/src/index.ts';
import { signup } from './accounts.ts';
import type { Services } from './stack.ts';

export interface SdkProgram {
  run: string;
  session: string;
  apiKey: string;
  programId: number;
  trackingToken: string;
  partnerId: number;
  shortLink: string;
  affiliateUrl: string;
  /** The partner's code (docs/codes.md). */
  couponCode: string;
}

export async function sdkProgram(svc: Pick<Services, 'baseUrl'>, label: string): Promise<SdkProgram> {
  const run = randomBytes(4).toString('hex');
  const owner = await signup(svc);
  const session = new Svc({ baseUrl: svc.baseUrl, token: owner.session });
  const created = await session.programs.create({
    name: `${label} ${run}`,
    commission: { type: 'percentage', percent: 30 },
  });
  await session.programs.goLive(created.data.id);
  const key = await session.request<{ data: { key: string } }>('POST', '/api/advertiser/api-keys', {
    body: { name: `${label} test` },
  });
  const admin = new Svc({ baseUrl: svc.baseUrl, token: key.data.key });
  const partner = await admin.partners.create(created.data.id, {
    name: 'Ada',
    email: `ada-${run}@example.com`,
  });
  const link = await admin.links.create(created.data.id, partner.data.partner.id, {
    short_link: `${label}-${run}`,
  });
  const couponCode = `${label}-${run}`.toUpperCase();
  await admin.request(
    'POST',
    `/api/advertiser/affiliate-programs/${created.data.id}/partners/${partner.data.partner.id}/codes`,
    {
      body: { code: couponCode },
    },
  );
  return {
    couponCode,
    run,
    session: owner.session,
    apiKey: key.data.key,
    programId: created.data.id,
    trackingToken: created.data.api_token,
    partnerId: partner.data.partner.id,
    shortLink: link.data.short_link,
    affiliateUrl: `https://shop.example/pricing?aff=${link.data.short_link}`,
  };
}
