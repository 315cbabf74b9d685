import type { DueWorkKind, SubscriptionRecord } from '../ports/storage.js';
import type { CommandContext } from './command-runner.js';

/**
 * The kinds of due work that are about a subscription. Subject ids of different kinds share one
 * column (a payment attempt or a webhook can have the same id as a subscription), so cancelling a
 * subscription's work always names these kinds, never "all kinds of this subject".
 */
export const SUBSCRIPTION_WORK: readonly DueWorkKind[] = [
  'renewal',
  'trial_end',
  'delayed_cancel',
  'delayed_product_change',
  'dunning_retry',
  'expiration',
  'auto_resume',
  'notice',
];

/** How long before a renewal or trial end its notice event is recorded (reference §3.4: 3 days). */
export const NOTICE_LEAD_MS = 3 * 86_400_000;

/**
 * Schedules the renewal of the subscription's next period at `dueAt` (by default the end of its
 * current period), and its notice three days before when that is still ahead. The key names the
 * period, the due instant and the subscription's version: scheduling the same renewal twice from
 * one state is a no-op, while a re-scheduled period (billing-date change, resume, reactivation)
 * gets a new row even when an earlier row for the same period was canceled. A second charge of
 * one period stays impossible through the payment key `renewal:<subscription>:<period>` and the
 * period index check.
 */
export async function scheduleRenewalAt(
  ctx: CommandContext,
  subscription: SubscriptionRecord,
  dueAt = subscription.currentPeriodEndsAt,
): Promise<void> {
  const next = subscription.periodIndex + 1;
  const suffix = `${next}@${dueAt.getTime()}/v${subscription.version}`;
  await ctx.tx.dueWork.schedule({
    siteId: subscription.siteId,
    kind: 'renewal',
    subjectId: subscription.id,
    dueAt,
    uniqueKey: `renewal:${subscription.id}:${suffix}`,
    payload: { periodIndex: next },
  });
  const noticeAt = new Date(dueAt.getTime() - NOTICE_LEAD_MS);
  if (noticeAt.getTime() > ctx.now.getTime()) {
    await ctx.tx.dueWork.schedule({
      siteId: subscription.siteId,
      kind: 'notice',
      subjectId: subscription.id,
      dueAt: noticeAt,
      uniqueKey: `notice:${subscription.id}:${suffix}`,
      payload: { periodIndex: next, renewalAt: dueAt.toISOString(), trial: subscription.state === 'trialing' },
    });
  }
}
