// Process entry for the notification worker: consumes the `notifications` topic (published by the refund
// path) and stores each notification_key once; poison is dead-lettered.
import { runWorker } from '../../../shared/pipeline/worker-runtime.ts';
import { effectConsumer } from '../../../shared/pipeline/effect-consumer.ts';
import { createInsertNotificationsStep } from './apply.ts';

await runWorker({
  name: 'notification-worker',
  topic: 'notifications',
  build: effectConsumer('notifications', createInsertNotificationsStep),
});
