import type { SubscriptionRecord } from '../ports/storage.js';
import type { CommandContext } from './command-runner.js';

/**
 * Schedules the renewal of the subscription's next period at `dueAt` (by default the end of its
 * current period). The key names the period, the due instant and the subscription's version:
 * scheduling the same renewal twice from one state is a no-op, while a re-scheduled period
 * (billing-date change, resume, reactivation) gets a new row even when an earlier row for the
 * same period was canceled. A second charge of one period stays impossible through the payment
 * key `renewal:<subscription>:<period>` and the period index check.
 */
export async function scheduleRenewalAt(ctx: CommandContext, subscription: SubscriptionRecord, dueAt = subscription.currentPeriodEndsAt): Promise<void> {
  const next = subscription.periodIndex + 1;
  await ctx.tx.dueWork.schedule({
    siteId: subscription.siteId,
    kind: 'renewal',
    subjectId: subscription.id,
    dueAt,
    uniqueKey: `renewal:${subscription.id}:${next}@${dueAt.getTime()}/v${subscription.version}`,
    payload: { periodIndex: next },
  });
}
