import {
  type BillingEvent,
  createBillingEngine,
  createTestGateway,
  ManualClock,
  type TransactionRecord,
} from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const DAY = 86_400_000;

interface Scenario {
  readonly startMs: number;
  readonly zone: string;
  readonly interval: number;
  readonly unit: 'day' | 'month';
  readonly priceInCents: number;
  readonly declines: readonly number[];
  /** Periods whose dunning retries all decline too, so the site's final action applies. */
  readonly retriesDecline: readonly number[];
  readonly finalAction: 'unpaid' | 'canceled';
  readonly days: number;
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  startMs: fc.integer({ min: Date.UTC(2024, 0, 1), max: Date.UTC(2030, 11, 31) }),
  zone: fc.constantFrom('UTC', 'America/New_York', 'Europe/Berlin', 'Australia/Lord_Howe', 'Asia/Kolkata'),
  interval: fc.integer({ min: 1, max: 3 }),
  unit: fc.constantFrom('day' as const, 'month' as const),
  priceInCents: fc.integer({ min: 0, max: 1_000_000 }),
  declines: fc.uniqueArray(fc.integer({ min: 1, max: 12 }), { maxLength: 4 }),
  retriesDecline: fc.uniqueArray(fc.integer({ min: 1, max: 12 }), { maxLength: 2 }),
  finalAction: fc.constantFrom('unpaid' as const, 'canceled' as const),
  days: fc.integer({ min: 20, max: 200 }),
});

/** Runs a scenario with the clock moved in steps of `stepDays` (0: one jump to the end, billed by two workers). */
async function run(s: Scenario, stepDays: number) {
  const clock = new ManualClock(s.startMs);
  // Declines are chosen by renewal period, so both runs decline the same renewals.
  const gateway = createTestGateway();
  const storage = createMemoryStorage();
  const engine = createBillingEngine({ storage, clock, gateway });
  // A second worker on the same storage: the jump is billed by both at once.
  const otherWorker = createBillingEngine({ storage, clock, gateway });
  const events: BillingEvent[] = [];
  engine.on('*', (e) => events.push(e));
  otherWorker.on('*', (e) => events.push(e));
  await engine.sites.create({
    subdomain: 'p',
    currency: 'USD',
    timeZone: s.zone,
    settings: { dunning: { retryCount: 2, retryIntervalHours: 24, finalAction: s.finalAction } },
  });
  const site = engine.site('p');
  const family = await site.catalog.createFamily({ name: 'F' });
  await site.catalog.createProduct(family.id, {
    name: 'Plan',
    handle: 'plan',
    priceInCents: s.priceInCents,
    interval: s.unit === 'day' ? s.interval * 7 : s.interval,
    intervalUnit: s.unit,
  });
  const { subscription } = await site.subscriptions.create({
    productHandle: 'plan',
    customer: { firstName: 'P', lastName: 'Q', email: 'p@q.co' },
    creditCard: { fullNumber: '4111111111111111', expirationMonth: 1, expirationYear: 2045 },
  });
  for (const period of s.declines)
    gateway.injectFailure({ outcome: 'declined', keyPrefix: `renewal:${subscription.id}:${period}`, times: 1 });
  for (const period of s.retriesDecline)
    gateway.injectFailure({ outcome: 'declined', keyPrefix: `dunning:${subscription.id}:${period}:`, times: 2 });
  const end = s.startMs + s.days * DAY;
  if (stepDays === 0) {
    clock.set(end);
    await Promise.all([engine.runDue({ batchSize: 2 }), otherWorker.runDue({ batchSize: 3 })]);
  } else {
    for (let t = s.startMs + stepDays * DAY; t <= end; t += stepDays * DAY) {
      clock.set(t);
      await engine.runDue();
    }
    clock.set(end);
    await engine.runDue();
  }
  const lines = await site.subscriptions.transactions(subscription.id);
  const view = await site.subscriptions.get(subscription.id);
  return { lines, events, view };
}

const lineShape = (l: TransactionRecord) => [
  l.createdAt.getTime(),
  l.type,
  l.kind,
  l.amountInCents,
  l.startingBalanceInCents,
  l.endingBalanceInCents,
  l.periodIndex,
];
/** Document uids are random, so two runs compare them by position (their numbers are compared). */
const eventShape = (e: BillingEvent) => [
  e.occurredAt.getTime(),
  e.key,
  e.subjectId,
  JSON.stringify(e.payload, (key, value) => (key === 'uid' || key.endsWith('_uid') ? 'uid' : value)),
];
const delta = (l: TransactionRecord) =>
  l.type === 'charge' || l.type === 'adjustment' || l.type === 'credit'
    ? l.amountInCents
    : l.type === 'payment'
      ? -l.amountInCents
      : 0;

describe('billing over time (memory, properties)', () => {
  it('gives the same ledger and events for one clock jump as for daily steps, never bills a period twice, and keeps the balance equal to the ledger', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const jumped = await run(s, 0);
        const daily = await run(s, 1);
        expect(jumped.lines.map(lineShape)).toEqual(daily.lines.map(lineShape));
        expect(jumped.events.map(eventShape)).toEqual(daily.events.map(eventShape));
        const periods = jumped.lines
          .filter((l) => l.type === 'charge' && l.kind === 'baseline')
          .map((l) => l.periodIndex);
        expect(new Set(periods).size).toBe(periods.length);
        expect(periods).toEqual([...periods].sort((a, b) => a! - b!));
        let balance = 0;
        for (const line of jumped.lines) {
          expect(line.startingBalanceInCents).toBe(balance);
          balance += delta(line);
          expect(line.endingBalanceInCents).toBe(balance);
        }
        expect(jumped.view.balanceInCents).toBe(balance);
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
