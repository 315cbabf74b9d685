import {
  type BillingError,
  createBillingEngine,
  createTestGateway,
  ManualClock,
  type TransactionRecord,
} from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ledgerServices, paidSubscription, seedSite, signedEffect } from './ledger-setup.js';

const amount = fc.integer({ min: 0, max: 5000 });

/** One random ledger command. */
const command = fc.oneof(
  fc.record({
    op: fc.constant('charge' as const),
    amount,
    mode: fc.constantFrom('paid', 'declined', 'delayed'),
    accrue: fc.boolean(),
    useNegativeBalance: fc.boolean(),
  }),
  fc.record({
    op: fc.constant('adjust' as const),
    amount: fc.integer({ min: -5000, max: 5000 }),
    target: fc.boolean(),
  }),
  fc.record({ op: fc.constant('credit' as const), amount }),
  fc.record({ op: fc.constant('external' as const), amount }),
  fc.record({
    op: fc.constant('refund' as const),
    pick: fc.nat(),
    amount: fc.option(fc.integer({ min: 1, max: 1500 }), { nil: undefined }),
    external: fc.boolean(),
    gatewayFails: fc.boolean(),
  }),
);

type Command = typeof command extends fc.Arbitrary<infer T> ? T : never;

/** A fresh engine, site and paid subscription, with the services under test. */
async function world() {
  const storage = createMemoryStorage();
  const clock = new ManualClock('2026-01-15T12:00:00Z');
  const base = createTestGateway();
  const engine = createBillingEngine({ storage, clock, gateway: base });
  const { siteId } = await seedSite(engine);
  const { id, paymentId } = await paidSubscription(engine);
  const services = ledgerServices(storage, clock, base);
  const lines = () => storage.transaction((tx) => tx.ledger.listForSubscription(siteId, id));
  const balance = () => storage.transaction((tx) => tx.ledger.balance(siteId, id));
  return { ...services, base, clock, sub: id, paymentId, lines, balance };
}

async function rejected(promise: Promise<unknown>): Promise<BillingError> {
  try {
    await promise;
  } catch (error) {
    return error as BillingError;
  }
  throw new Error('expected a rejection');
}

/** Checks the ledger invariants: chaining, balance = signed sum, refunds within their payments. */
function checkInvariants(all: readonly TransactionRecord[], balance: number): void {
  let running = 0;
  for (const line of all) {
    expect(line.startingBalanceInCents).toBe(running);
    running += signedEffect(line);
    expect(line.endingBalanceInCents).toBe(running);
  }
  expect(balance).toBe(running);
  for (const payment of all.filter((l) => l.type === 'payment')) {
    const refunds = all.filter((l) => l.type === 'refund' && l.paymentId === payment.id);
    const refunded = refunds.reduce((sum, l) => sum + l.amountInCents, 0);
    expect(payment.refundedAmountInCents).toBe(refunded);
    expect(refunded).toBeLessThanOrEqual(payment.amountInCents);
  }
}

describe('ledger properties (memory)', () => {
  it('keeps balance = signed sum of lines, lines chained and refunds within payments, matching a model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 20 }), async (commands: Command[]) => {
        const w = await world();
        let model = 0;
        for (const c of commands) {
          w.clock.advance({ minutes: 1 });
          if (c.op === 'charge') {
            const delayed = c.mode === 'delayed';
            const collect = delayed ? 0 : Math.max(0, c.amount - (c.useNegativeBalance ? Math.max(0, -model) : 0));
            const declines = c.mode === 'declined' && collect > 0;
            if (declines) w.base.injectFailure({ outcome: 'declined', keyPrefix: 'charge:' });
            const input = {
              amountInCents: c.amount,
              memo: 'charge',
              delayCapture: delayed,
              accrueOnFailure: !delayed && c.accrue,
              useNegativeBalance: c.useNegativeBalance,
            };
            if (declines) {
              expect((await rejected(w.ledger.charge('acme', w.sub, input))).code).toBe('payment_declined');
              if (c.accrue) model += c.amount;
            } else {
              await w.ledger.charge('acme', w.sub, input);
              model += c.amount - collect;
            }
          } else if (c.op === 'adjust') {
            await w.ledger.adjust('acme', w.sub, {
              amountInCents: c.amount,
              adjustmentMethod: c.target ? 'target' : 'delta',
            });
            model = c.target ? c.amount : model + c.amount;
          } else if (c.op === 'credit') {
            await w.ledger.credit('acme', w.sub, { amountInCents: c.amount, memo: 'credit' });
            model -= c.amount;
          } else if (c.op === 'external') {
            await w.ledger.recordExternalPayment('acme', w.sub, { amountInCents: c.amount });
            model -= c.amount;
          } else {
            const payments = (await w.lines()).filter((l) => l.type === 'payment');
            const payment = payments[c.pick % payments.length]!;
            const remaining = payment.amountInCents - payment.refundedAmountInCents;
            const external = c.external || payment.gatewayTransactionId === null;
            const wanted = c.amount ?? remaining;
            const input = { paymentId: payment.id, amountInCents: c.amount, memo: 'refund', external };
            if (wanted > remaining || wanted === 0) {
              const error = await rejected(w.ledger.refund('acme', w.sub, input));
              expect(error.messages).toEqual(['Amount: cannot exceed the remaining refundable amount.']);
            } else if (!external && c.gatewayFails) {
              w.gateway.refundPlan.push('fail');
              expect((await rejected(w.ledger.refund('acme', w.sub, input))).code).toBe('gateway_error');
            } else {
              expect((await w.ledger.refund('acme', w.sub, input)).amountInCents).toBe(wanted);
            }
          }
          const balance = await w.balance();
          expect(balance).toBe(model);
          checkInvariants(await w.lines(), balance);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('never lets concurrent refunds of one payment exceed it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ amount: fc.integer({ min: 1, max: 600 }), external: fc.boolean() }), {
          minLength: 2,
          maxLength: 12,
        }),
        async (refunds) => {
          const w = await world();
          const results = await Promise.allSettled(
            refunds.map((r, i) =>
              w.ledger.refund('acme', w.sub, {
                paymentId: w.paymentId,
                amountInCents: r.amount,
                memo: `r${i}`,
                external: r.external,
              }),
            ),
          );
          const succeeded = results.filter(
            (r): r is PromiseFulfilledResult<TransactionRecord> => r.status === 'fulfilled',
          );
          const total = succeeded.reduce((sum, r) => sum + r.value.amountInCents, 0);
          expect(total).toBeLessThanOrEqual(1000);
          for (const r of results) {
            if (r.status === 'rejected') {
              expect((r.reason as BillingError).messages).toEqual([
                'Amount: cannot exceed the remaining refundable amount.',
              ]);
            }
          }
          const all = await w.lines();
          expect(all.find((l) => l.id === w.paymentId)?.refundedAmountInCents).toBe(total);
          const viaGateway = w.gateway.refunds.reduce((sum, r) => sum + r.amountInCents, 0);
          const external = succeeded
            .filter((r) => r.value.kind === 'manual')
            .reduce((sum, r) => sum + r.value.amountInCents, 0);
          expect(viaGateway + external).toBe(total);
          // A refund that was turned away must have found too little left, so the total is greedy-maximal.
          const smallestRejected = Math.min(
            ...results.map((r, i) => (r.status === 'rejected' ? refunds[i]!.amount : Number.POSITIVE_INFINITY)),
          );
          if (Number.isFinite(smallestRejected)) expect(total + smallestRejected).toBeGreaterThan(1000);
          checkInvariants(all, await w.balance());
        },
      ),
      { numRuns: 40 },
    );
  });
});
