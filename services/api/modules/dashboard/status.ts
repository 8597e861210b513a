// The status read model (GET /api/tracking/status): the integration checklist of a program, its test
// events and its payment processor connection.
import type { StatusRow } from './dal.ts';

export function statusBody(programId: string, r: StatusRow, now: Date) {
  const latest = (eid: string | null, ts: Date | null, created: Date | null) =>
    eid === null ? null : { id: eid, timestamp: ts!.toISOString(), createdAt: created!.toISOString() };
  const connected = r.pc_status === 'connected';
  return {
    data: {
      programId,
      stepStatuses: {
        pageview: r.click_n > 0 ? 'complete' : 'pending',
        referrals: r.lead_n > 0 ? 'complete' : 'pending',
        payments: connected ? 'complete' : 'pending',
      },
      statistics: {
        pageview: {
          testEventCount: r.click_n,
          hasTestEvents: r.click_n > 0,
          latestTestEvent: latest(r.click_id, r.click_ts, r.click_created),
        },
        referrals: {
          testEventCount: r.lead_n,
          hasTestEvents: r.lead_n > 0,
          latestTestEvent: latest(r.lead_id, r.lead_ts, r.lead_created),
        },
        payments: {
          processorConnectionStatus: r.pc_status ?? 'not_connected',
          isProcessorConnected: connected,
          processorAccountId: r.account_id,
          chargesEnabled: r.charges_enabled === true,
          payoutsEnabled: r.payouts_enabled === true,
          detailsSubmitted: r.details_submitted === true,
          connectionDate: r.connected_at === null ? null : r.connected_at.toISOString(),
        },
      },
      hasPartners: r.has_partners,
      filteredClicks: r.filtered_n,
      lastUpdated: now.toISOString(),
    },
  };
}
