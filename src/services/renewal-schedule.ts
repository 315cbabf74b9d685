import { daysInMonth, fromWallClock, toWallClock } from '../domain/time/index.js';
import {
  type DueWorkKind,
  type NewDueWork,
  type SiteRecord,
  type StorageTransaction,
  SUBSCRIPTION_WORK_KINDS,
  type SubscriptionRecord,
} from '../ports/storage.js';
import type { CommandContext } from './command-runner.js';

/**
 * The kinds of due work that are about a subscription. Subject ids of different kinds share one
 * column (a payment attempt or a webhook can have the same id as a subscription), so cancelling a
 * subscription's work always names these kinds, never "all kinds of this subject".
 */
export const SUBSCRIPTION_WORK: readonly DueWorkKind[] = SUBSCRIPTION_WORK_KINDS;

/** How long before a renewal or trial end its notice event is recorded (3 days, as the service does). */
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
  const works: NewDueWork[] = [
    {
      siteId: subscription.siteId,
      kind: 'renewal',
      subjectId: subscription.id,
      dueAt,
      uniqueKey: `renewal:${subscription.id}:${suffix}`,
      payload: { periodIndex: next },
    },
  ];
  const noticeAt = new Date(dueAt.getTime() - NOTICE_LEAD_MS);
  if (noticeAt.getTime() > ctx.now.getTime()) {
    works.push({
      siteId: subscription.siteId,
      kind: 'notice',
      subjectId: subscription.id,
      dueAt: noticeAt,
      uniqueKey: `notice:${subscription.id}:${suffix}`,
      payload: { periodIndex: next, renewalAt: dueAt.toISOString(), trial: subscription.state === 'trialing' },
    });
  }
  await ctx.tx.dueWork.scheduleAll(works);
}

/**
 * The next expiring-card scan strictly after `after`: 09:00 site time on the 1st, the 15th, or
 * seven days before the month's end (the service's `expiring_card` schedule).
 */
export function nextExpiringCardScan(after: Date, zone: string): Date {
  const wall = toWallClock(after, zone);
  for (let step = 0; step < 3; step++) {
    const year = wall.year + Math.floor((wall.month - 1 + step) / 12);
    const month = ((wall.month - 1 + step) % 12) + 1;
    const days = [1, 15, daysInMonth(year, month) - 7];
    for (const day of days) {
      const at = fromWallClock({ year, month, day, hour: 9, minute: 0, second: 0, millisecond: 0 }, zone);
      if (at.getTime() > after.getTime()) return at;
    }
  }
  throw new Error('unreachable: a scan day exists within three months');
}

/** Schedules the site's next expiring-card scan after `after` (once per instant). */
export async function scheduleExpiringCardScan(tx: StorageTransaction, site: SiteRecord, after: Date): Promise<void> {
  const dueAt = nextExpiringCardScan(after, site.timeZone);
  await tx.dueWork.schedule({
    siteId: site.id,
    kind: 'expiring_card_scan',
    subjectId: site.id,
    dueAt,
    uniqueKey: `expiring_card_scan:${dueAt.getTime()}`,
  });
}
