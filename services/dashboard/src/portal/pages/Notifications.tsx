// The partner's notifications: applications decided, refunds that took a commission back, payouts.
import { navigate, useLocation } from '../../router.tsx';
import { NotificationList, partnerNotifications } from '../../notifications.tsx';
import { Title } from '../parts.tsx';
import { usePartner } from '../session.tsx';

export function Notifications() {
  const session = usePartner();
  const { query } = useLocation();
  const page = Math.max(1, Number(query.get('page')) || 1);
  return (
    <>
      <Title>Notifications</Title>
      <NotificationList
        source={partnerNotifications}
        page={page}
        onPage={(p) => navigate(`/partner/notifications${p > 1 ? `?page=${p}` : ''}`, true)}
        onRead={session.refreshUnread}
        empty="No notifications yet. Decided applications, refunds and payouts are announced here."
      />
    </>
  );
}
