// svc.rewards: how partners are paid differently (docs/rewards.md), one method per route: a program's groups
// (their policies, holds, auto-approval and discounts), where a partner is and its own policy, the tier
// ladder, and bonuses. Same conventions as resources.ts: the answer's JSON body as the API reference shows
// it; GET, PUT and DELETE retried, a POST only on 429.
import type { CallOptions } from './transport.ts';
import type { ApiBody, ApiSuccess } from './types.ts';
import { Resource, path } from './resources.ts';
import type { Id } from './resources.ts';

type Program_ = '/api/advertiser/affiliate-programs/{id}';
type Groups_ = `${Program_}/groups`;
type Group_ = `${Groups_}/{groupId}`;
type Partner_ = `${Program_}/partners/{partnerId}`;
type Tiers_ = `${Program_}/tier-rules`;
type Bonuses_ = `${Program_}/bonuses`;
type Bonus_ = `${Bonuses_}/{bonusId}`;

export class Rewards extends Resource {
  /** The program's groups, the default (the program's own policy) first. */
  groups(programId: Id, o?: CallOptions): Promise<ApiSuccess<Groups_, 'get'>> {
    return this.getJson(path`/api/advertiser/affiliate-programs/${programId}/groups`, undefined, o);
  }
  createGroup(
    programId: Id,
    body: ApiBody<Groups_, 'post'>,
    o?: CallOptions,
  ): Promise<ApiSuccess<Groups_, 'post'>> {
    return this.postJson(path`/api/advertiser/affiliate-programs/${programId}/groups`, body, o);
  }
  group(programId: Id, groupId: Id, o?: CallOptions): Promise<ApiSuccess<Group_, 'get'>> {
    return this.getJson(
      path`/api/advertiser/affiliate-programs/${programId}/groups/${groupId}`,
      undefined,
      o,
    );
  }
  /** Only the fields given change; the default group's commission is the program's. */
  updateGroup(
    programId: Id,
    groupId: Id,
    body: ApiBody<Group_, 'put'>,
    o?: CallOptions,
  ): Promise<ApiSuccess<Group_, 'put'>> {
    return this.putJson(path`/api/advertiser/affiliate-programs/${programId}/groups/${groupId}`, body, o);
  }
  /** Its partners move to the default group; its commissions stay as they are. */
  deleteGroup(programId: Id, groupId: Id, o?: CallOptions): Promise<ApiSuccess<Group_, 'delete'>> {
    return this.deleteJson(path`/api/advertiser/affiliate-programs/${programId}/groups/${groupId}`, o);
  }
  /** Moves the partner to `group_id`; `locked: true` keeps tier rules from moving it. */
  placePartner(
    programId: Id,
    partnerId: Id,
    body: ApiBody<`${Partner_}/group`, 'put'>,
    o?: CallOptions,
  ): Promise<ApiSuccess<`${Partner_}/group`, 'put'>> {
    return this.putJson(
      path`/api/advertiser/affiliate-programs/${programId}/partners/${partnerId}/group`,
      body,
      o,
    );
  }
  /** The partner's own policy (null clears it): it wins over its group's for sales decided from then on. */
  setPartnerCommission(
    programId: Id,
    partnerId: Id,
    body: ApiBody<`${Partner_}/commission`, 'put'>,
    o?: CallOptions,
  ): Promise<ApiSuccess<`${Partner_}/commission`, 'put'>> {
    return this.putJson(
      path`/api/advertiser/affiliate-programs/${programId}/partners/${partnerId}/commission`,
      body,
      o,
    );
  }
  tierRules(programId: Id, o?: CallOptions): Promise<ApiSuccess<Tiers_, 'get'>> {
    return this.getJson(path`/api/advertiser/affiliate-programs/${programId}/tier-rules`, undefined, o);
  }
  /** Replaces the whole ladder (`[]` removes it). */
  setTierRules(
    programId: Id,
    rules: ApiBody<Tiers_, 'put'>,
    o?: CallOptions,
  ): Promise<ApiSuccess<Tiers_, 'put'>> {
    return this.putJson(path`/api/advertiser/affiliate-programs/${programId}/tier-rules`, rules, o);
  }
  bonuses(programId: Id, o?: CallOptions): Promise<ApiSuccess<Bonuses_, 'get'>> {
    return this.getJson(path`/api/advertiser/affiliate-programs/${programId}/bonuses`, undefined, o);
  }
  createBonus(
    programId: Id,
    body: ApiBody<Bonuses_, 'post'>,
    o?: CallOptions,
  ): Promise<ApiSuccess<Bonuses_, 'post'>> {
    return this.postJson(path`/api/advertiser/affiliate-programs/${programId}/bonuses`, body, o);
  }
  /** It stops counting; the commissions it made stay. */
  deleteBonus(programId: Id, bonusId: Id, o?: CallOptions): Promise<ApiSuccess<Bonus_, 'delete'>> {
    return this.deleteJson(path`/api/advertiser/affiliate-programs/${programId}/bonuses/${bonusId}`, o);
  }
}
