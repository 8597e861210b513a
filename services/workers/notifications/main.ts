// Process entry for the notification worker: stores each notification of the `notifications` topic (outbox
// rows every process writes with shared/db/notifications.ts `queueNotifications`) once (notification_key),
// queuing the mail of those marked to be mailed; poison is dead-lettered.
import { runWorker } from '../../../shared/pipeline/worker-runtime.ts';
import { effectConsumer } from '../../../shared/pipeline/effect-consumer.ts';
import { createInsertNotificationsStep } from './apply.ts';

await runWorker({
  name: 'notification-worker',
  topic: 'notifications',
  // Stored for the dashboard and the partner: nothing waits for them.
  batchFetches: true,
  build: effectConsumer('notifications', createInsertNotificationsStep),
});
