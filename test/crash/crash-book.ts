/**
 * The book of subscriptions the crash tests bill: built the same way, in the same order, for the
 * crashed run and for its uncrashed control, so both start from identical databases (same ids,
 * same vault tokens) and must end identical too.
 */
import { type BillingEngine, EVENT_KEYS, type ManualClock } from 'billing-engine';

/** The book is created at this instant. */
export const BOOK_START = '2026-01-01T09:00:00Z';
/** The billing run bills everything due up to this instant (six months later). */
export const BILL_UNTIL = '2026-07-01T09:00:00Z';
export const SUBDOMAIN = 'crashco';

/** How the book is shaped; every variant is exercised by a share of its subscriptions. */
export interface BookShape {
  readonly subscriptions: number;
  /** The card numbers signups use and the one that declines every renewal; default the test gateway's. */
  readonly cards?: { readonly ok: string; readonly declining: string };
}

/**
 * A merchant command the billing processes run in the middle of a period, between renewals: the
 * processes bill everything due up to `at`, then run it on a clock set to `at`. A command not done
 * by then (its process was killed, or it was refused while a killed one's payment was unsettled)
 * is tried again at each of `retries`, after the reconciliation of the killed payment.
 */
export type CrashCommand = {
  readonly subscriptionId: number;
  readonly at: string;
  readonly retries: readonly string[];
} & (
  | {
      /** Seats raised mid-period: a prorated charge, collected at once through the gateway. */
      readonly kind: 'allocation';
      readonly componentId: number;
      readonly quantity: number;
      readonly memo: string;
    }
  | {
      /** A prorated migration (credit for the unused time, the new product charged) paid at once. */
      readonly kind: 'migration';
      readonly productHandle: string;
    }
);

/** The commands of the book: the billing processes run them between renewals, kills and all. */
const ALLOCATIONS_AT = '2026-02-24T15:00:00Z';
const MIGRATIONS_AT = '2026-03-10T15:00:00Z';
/** Retries come after the killed attempt's reconciliation (an hour) and its open-collection claim (two). */
const RETRY_HOURS = [3, 6, 12];

const later = (at: string, hours: number) => new Date(Date.parse(at) + hours * 3_600_000).toISOString();

/** What {@link seedBook} made that the commands name. */
export interface SeededBook {
  /** Subscription id of each book entry. */
  readonly ids: readonly number[];
  readonly seatsComponentId: number;
}

/**
 * Entries chosen for commands: active on their card all along (no declining card, no cancellation
 * at the end of a period). Every such Team entry (seats, after its trial) raises its seats
 * mid-period; every other such Basic entry migrates to Team mid-period.
 */
export function bookCommands(book: SeededBook): CrashCommand[] {
  const steady = (i: number) => i % 8 !== 7 && i % 11 !== 4;
  const commands: CrashCommand[] = [];
  for (const [i, subscriptionId] of book.ids.entries()) {
    if (!steady(i)) continue;
    if (i % 3 === 2) {
      commands.push({
        kind: 'allocation',
        subscriptionId,
        at: ALLOCATIONS_AT,
        retries: RETRY_HOURS.map((h) => later(ALLOCATIONS_AT, h)),
        componentId: book.seatsComponentId,
        quantity: 1 + (i % 4) + 3,
        memo: `Crash book: seats raised for entry ${i}`,
      });
    }
    if (i % 6 === 1) {
      commands.push({
        kind: 'migration',
        subscriptionId,
        at: MIGRATIONS_AT,
        retries: RETRY_HOURS.map((h) => later(MIGRATIONS_AT, h)),
        productHandle: 'team',
      });
    }
  }
  return commands;
}

/**
 * Creates the site, catalog, webhook endpoint and `subscriptions` subscriptions: weekly, monthly
 * and trial products; seats; metered usage; a recurring coupon; cards that decline their renewals
 * (dunning, then cancellation); and cancellations at the end of the period.
 */
export async function seedBook(
  engine: BillingEngine,
  clock: ManualClock,
  shape: BookShape,
  receiverUrl: string,
): Promise<SeededBook> {
  await engine.sites.create({
    subdomain: SUBDOMAIN,
    currency: 'USD',
    timeZone: 'America/Chicago',
    settings: { dunning: { retryCount: 2, retryIntervalHours: 24, finalAction: 'canceled' } },
  });
  const site = engine.site(SUBDOMAIN);
  await site.webhooks.createEndpoint({
    url: `${receiverUrl}/hooks`,
    webhookSubscriptions: EVENT_KEYS.filter((key) => key !== 'test'),
  });
  const family = await site.catalog.createFamily({ name: 'Plans' });
  await site.catalog.createProduct(family.id, {
    name: 'Weekly',
    handle: 'weekly',
    priceInCents: 700,
    interval: 7,
    intervalUnit: 'day',
  });
  await site.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1900,
    interval: 1,
    intervalUnit: 'month',
  });
  await site.catalog.createProduct(family.id, {
    name: 'Team',
    handle: 'team',
    priceInCents: 9900,
    interval: 1,
    intervalUnit: 'month',
    trialInterval: 14,
    trialIntervalUnit: 'day',
    trialPriceInCents: 0,
  });
  const seats = await site.components.create(family.id, {
    kind: 'quantity_based_component',
    name: 'Seats',
    unitName: 'seat',
    pricingScheme: 'per_unit',
    unitPrice: '4.00',
  });
  const calls = await site.components.create(family.id, {
    kind: 'metered_component',
    name: 'API calls',
    unitName: 'call',
    pricingScheme: 'per_unit',
    unitPrice: '0.05',
  });
  await site.coupons.create({
    name: 'Launch',
    code: 'LAUNCH',
    percentage: '15',
    recurring: true,
    durationPeriodCount: 3,
    productFamilyId: family.id,
  });
  const handles = ['weekly', 'basic', 'team'] as const;
  const cards = shape.cards ?? { ok: '4111111111111111', declining: '2' };
  const ids: number[] = [];
  for (let i = 0; i < shape.subscriptions; i++) {
    const handle = handles[i % 3]!;
    const created = await site.subscriptions.create({
      productHandle: handle,
      customer: { firstName: 'Crash', lastName: `Customer ${i}`, email: `crash${i}@example.com`, reference: `c-${i}` },
      creditCard: { fullNumber: cards.ok, expirationMonth: 12, expirationYear: 2040 },
      ...(i % 4 === 1 ? { couponCode: 'LAUNCH' } : {}),
      ...(handle === 'team'
        ? { components: [{ componentId: seats.component.id, allocatedQuantity: 1 + (i % 4) }] }
        : {}),
    });
    const id = created.subscription.id;
    ids.push(id);
    if (handle === 'basic' && i % 5 === 1) {
      await site.allocations.recordUsage(id, calls.component.id, { quantity: 100 + i, memo: 'batch import' });
    }
    // Every eighth customer's card is swapped for one that declines: renewals fail, dunning retries
    // twice a day apart, then the subscription is cancelled.
    if (i % 8 === 7) {
      await site.subscriptions.updateCard(id, {
        fullNumber: cards.declining,
        expirationMonth: 12,
        expirationYear: 2040,
      });
    }
    if (i % 11 === 4) await site.subscriptions.cancelAtEndOfPeriod(id, { cancellationMessage: 'Leaving' });
    clock.advance({ minutes: 7 });
  }
  return { ids, seatsComponentId: seats.component.id };
}
