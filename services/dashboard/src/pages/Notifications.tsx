// The advertiser's notifications (the workspace's: the spec's manual-review warning when a paid commission
// is refunded, applications received, mail that could not be delivered, ...): the bell in the header with
// the unread count, and the page /notifications (the mail's links point here) with mark read / all read.
import { navigate, useLocation, Link } from '../router.tsx';
import { NotificationList, UnreadBadge, useUnreadCount, workspaceNotifications } from '../notifications.tsx';
import { useSession } from '../session.tsx';
import { PageTitle } from '../program.tsx';

/** The bell: a link to /notifications with the unread count, asked on every page change and each minute. */
export function NotificationBell(props: { path: string; tick: number }) {
  const { workspaceId } = useSession();
  const unread = useUnreadCount(workspaceNotifications(workspaceId), [props.path, props.tick]);
  return (
    <Link
      href="/notifications"
      class="bell"
      aria-current={props.path === '/notifications' ? 'page' : undefined}
      title={unread ? `Notifications: ${unread} unread` : 'Notifications'}
    >
      <svg aria-hidden="true" viewBox="0 0 16 16" width="18" height="18">
        <path
          fill="currentColor"
          d="M8 16a2 2 0 0 0 1.98-1.7H6.02A2 2 0 0 0 8 16ZM8 1.5a1 1 0 0 0-1 1v.6A4.5 4.5 0 0 0 3.5 7.5v3L2 12.3v.7h12v-.7l-1.5-1.8v-3A4.5 4.5 0 0 0 9 3.1v-.6a1 1 0 0 0-1-1Z"
        />
      </svg>
      <span class="sr-only">Notifications</span>
      <UnreadBadge count={unread} />
    </Link>
  );
}

export function Notifications(props: { onRead(): void }) {
  const { workspaceId } = useSession();
  const { query } = useLocation();
  const page = Math.max(1, Number(query.get('page')) || 1);
  return (
    <>
      <PageTitle title="Notifications" />
      <NotificationList
        source={workspaceNotifications(workspaceId)}
        page={page}
        onPage={(p) => navigate(`/notifications${p > 1 ? `?page=${p}` : ''}`, true)}
        onRead={props.onRead}
        empty="No notifications. Refunds of paid commissions, partner applications and mail that could not be delivered are announced here."
      />
    </>
  );
}
