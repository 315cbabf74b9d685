/**
 * Property: whatever sequence of commands and clock moves a subscription goes through, its invoices
 * stay equal to the ledger (every billed line on exactly one invoice, totals equal to their lines),
 * numbers stay gap-free, open invoices owe exactly the positive balance, and credit notes never
 * exceed what their invoice was paid. Memory adapter (the same code path as SQL; the year scenario
 * covers every adapter).
 */
import { createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkInvoiceInvariants } from './invariants.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const DAY = 86_400_000;

type Command =
  | { readonly type: 'advance'; readonly days: number }
  | { readonly type: 'migrate'; readonly product: 'a' | 'b'; readonly preservePeriod: boolean }
  | { readonly type: 'allocate'; readonly quantity: number }
  | { readonly type: 'charge'; readonly amountInCents: number; readonly delay: boolean }
  | { readonly type: 'credit'; readonly amountInCents: number }
  | { readonly type: 'decline' }
  | { readonly type: 'adhoc'; readonly amountInCents: number }
  | { readonly type: 'pay'; readonly fraction: number }
  | { readonly type: 'void' }
  | { readonly type: 'refund'; readonly fraction: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: fc.constant('advance' as const), days: fc.integer({ min: 1, max: 45 }) }) },
  fc.record({
    type: fc.constant('migrate' as const),
    product: fc.constantFrom('a' as const, 'b' as const),
    preservePeriod: fc.boolean(),
  }),
  fc.record({ type: fc.constant('allocate' as const), quantity: fc.integer({ min: 0, max: 12 }) }),
  fc.record({
    type: fc.constant('charge' as const),
    amountInCents: fc.integer({ min: 1, max: 50_000 }),
    delay: fc.boolean(),
  }),
  fc.record({ type: fc.constant('credit' as const), amountInCents: fc.integer({ min: 1, max: 5_000 }) }),
  fc.record({ type: fc.constant('decline' as const) }),
  fc.record({ type: fc.constant('adhoc' as const), amountInCents: fc.integer({ min: 1, max: 20_000 }) }),
  fc.record({ type: fc.constant('pay' as const), fraction: fc.double({ min: 0.1, max: 1, noNaN: true }) }),
  fc.record({ type: fc.constant('void' as const) }),
  fc.record({ type: fc.constant('refund' as const), fraction: fc.double({ min: 0.05, max: 1, noNaN: true }) }),
);

/** How many of each command took effect over all runs, so the property cannot pass by refusing everything. */
const done = new Map<Command['type'], number>();

async function run(commands: readonly Command[], coupon: boolean, trial: boolean): Promise<void> {
  const clock = new ManualClock('2026-01-10T09:00:00Z');
  const gateway = createTestGateway();
  const storage = createMemoryStorage();
  const engine = createBillingEngine({ storage, clock, gateway });
  const { site } = await engine.sites.create({ subdomain: 'p', currency: 'USD', timeZone: 'Europe/Berlin' });
  const acme = engine.site('p');
  const family = await acme.catalog.createFamily({ name: 'F' });
  for (const [handle, price] of [
    ['a', 1000],
    ['b', 2900],
  ] as const) {
    await acme.catalog.createProduct(family.id, {
      name: handle,
      handle,
      priceInCents: price,
      interval: 1,
      intervalUnit: 'month',
      ...(trial && handle === 'a'
        ? { trialInterval: 10, trialIntervalUnit: 'day' as const, trialPriceInCents: 0 }
        : {}),
    });
  }
  await acme.coupons.create({
    name: 'Off',
    code: 'OFF',
    percentage: '30',
    recurring: true,
    productFamilyId: family.id,
  });
  const seats = await acme.components.create(family.id, {
    kind: 'quantity_based_component',
    name: 'Seats',
    handle: 'seats',
    unitName: 'seat',
    pricingScheme: 'per_unit',
    unitPrice: '3.00',
  });
  const { subscription } = await acme.subscriptions.create({
    productHandle: 'a',
    customer: { firstName: 'P', lastName: 'Q', email: 'p@q.co' },
    creditCard: VISA,
    ...(coupon ? { couponCode: 'OFF' } : {}),
    components: [{ componentId: seats.component.id, allocatedQuantity: 2 }],
  });
  const id = subscription.id;
  for (const c of commands) {
    // Commands a subscription's state refuses (a closed subscription, a declined charge) are part
    // of the sequence: a refusal must leave the invoices consistent too.
    let acted = true;
    try {
      switch (c.type) {
        case 'advance':
          clock.set(new Date(clock.now().getTime() + c.days * DAY));
          await engine.runDue();
          break;
        case 'migrate':
          await acme.subscriptions.migrate(id, { productHandle: c.product, preservePeriod: c.preservePeriod });
          break;
        case 'allocate':
          await acme.allocations.allocate(id, seats.component.id, { quantity: c.quantity });
          break;
        case 'charge':
          await acme.ledger.charge(id, { amountInCents: c.amountInCents, memo: 'Extra', delayCapture: c.delay });
          break;
        case 'credit':
          await acme.ledger.credit(id, { amountInCents: c.amountInCents, memo: 'Goodwill' });
          break;
        case 'decline':
          gateway.injectFailure({ outcome: 'declined', times: 1 });
          break;
        case 'adhoc':
          await acme.invoices.createAdhoc(id, { lineItems: [{ title: 'Work', unitPriceInCents: c.amountInCents }] });
          break;
        case 'pay': {
          const open = (await acme.invoices.list({ status: 'open', direction: 'asc' })).invoices[0];
          if (open) {
            const amount = Math.max(1, Math.floor(open.dueInCents * c.fraction));
            await acme.invoices.recordPayment(open.uid, { amountInCents: amount });
          } else acted = false;
          break;
        }
        case 'void': {
          const open = (await acme.invoices.list({ status: 'open' })).invoices.find((i) => i.paidInCents === 0);
          if (open) await acme.invoices.void(open.uid, 'Property test');
          else acted = false;
          break;
        }
        case 'refund': {
          const paid = (await acme.invoices.list({ status: 'paid' })).invoices.find(
            (i) => i.paidInCents - i.refundInCents > 0 && i.payments.some((p) => p.method !== 'credit'),
          );
          if (paid) {
            const amount = Math.max(1, Math.floor((paid.paidInCents - paid.refundInCents) * c.fraction));
            const last = paid.payments.filter((p) => p.method !== 'credit').at(-1)!;
            const onThis = paid.payments
              .filter((p) => p.transactionId === last.transactionId)
              .reduce((sum, p) => sum + p.amountInCents, 0);
            await acme.invoices.refund(paid.uid, { amountInCents: Math.min(amount, onThis), memo: 'Sorry' });
          } else acted = false;
          break;
        }
      }
      if (acted) done.set(c.type, (done.get(c.type) ?? 0) + 1);
    } catch (error) {
      const code = (error as { code?: string }).code;
      // Only refusals the service documents; an internal error is a bug.
      expect(['validation', 'payment_declined', 'gateway_error', 'conflict', 'unprocessable']).toContain(code);
    }
    await checkInvoiceInvariants(storage, site.id);
  }
}

/** Each command type acting at least once: open invoices to pay and void, a card payment to refund. */
const COVERING_SEQUENCE: Command[] = [
  { type: 'adhoc', amountInCents: 5_000 },
  { type: 'pay', fraction: 0.5 },
  { type: 'adhoc', amountInCents: 3_000 },
  { type: 'void' },
  { type: 'charge', amountInCents: 2_500, delay: false },
  { type: 'refund', fraction: 0.5 },
  { type: 'migrate', product: 'b', preservePeriod: false },
  { type: 'allocate', quantity: 5 },
  { type: 'advance', days: 31 },
];

describe('invoices over random command sequences', () => {
  it('keep every invariant with the ledger after every command', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 14 }), fc.boolean(), fc.boolean(), run),
      {
        numRuns: 40,
        // One sequence that acts with every command (a random seed may draw none that can pay or
        // void), so that the coverage check below never fails by chance.
        examples: [[COVERING_SEQUENCE, false, false]],
      },
    );
    for (const type of ['migrate', 'allocate', 'charge', 'adhoc', 'pay', 'void', 'refund'] as const)
      expect(done.get(type) ?? 0, type).toBeGreaterThan(0);
  }, 240_000);
});
