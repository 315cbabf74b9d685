import {
  BillingError,
  createBillingEngine,
  createTestGateway,
  isAllowedMove,
  ManualClock,
  type SubscriptionState,
} from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

type Command =
  | { kind: 'cancel' }
  | { kind: 'cancelAtEnd' }
  | { kind: 'undoCancel' }
  | { kind: 'reactivate'; includeTrial: boolean; resume: boolean; preserveBalance: boolean }
  | { kind: 'hold' }
  | { kind: 'resume' }
  | { kind: 'billingDate'; days: number }
  | { kind: 'advance'; days: number; decline: 'none' | 'declined' | 'error' };

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.constant({ kind: 'cancel' as const }),
  fc.constant({ kind: 'cancelAtEnd' as const }),
  fc.constant({ kind: 'undoCancel' as const }),
  fc.record({
    kind: fc.constant('reactivate' as const),
    includeTrial: fc.boolean(),
    resume: fc.boolean(),
    preserveBalance: fc.boolean(),
  }),
  fc.constant({ kind: 'hold' as const }),
  fc.constant({ kind: 'resume' as const }),
  fc.record({ kind: fc.constant('billingDate' as const), days: fc.integer({ min: -5, max: 40 }) }),
  fc.record({
    kind: fc.constant('advance' as const),
    days: fc.integer({ min: 1, max: 45 }),
    decline: fc.constantFrom('none' as const, 'declined' as const, 'error' as const),
  }),
);

describe('lifecycle properties (memory)', () => {
  it('keeps any random command sequence inside the transition table, recording every move', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { minLength: 1, maxLength: 14 }),
        fc.boolean(),
        async (commands, withTrial) => {
          const clock = new ManualClock('2027-03-15T12:00:00Z');
          const gateway = createTestGateway();
          const engine = createBillingEngine({ storage: createMemoryStorage(), clock, gateway });
          await engine.sites.create({ subdomain: 'p', currency: 'USD', timeZone: 'Europe/Berlin' });
          const site = engine.site('p');
          const family = await site.catalog.createFamily({ name: 'F' });
          await site.catalog.createProduct(family.id, {
            name: 'Plan',
            handle: 'plan',
            priceInCents: 1500,
            interval: 1,
            intervalUnit: 'month',
            ...(withTrial ? { trialInterval: 7, trialIntervalUnit: 'day' as const, trialPriceInCents: 0 } : {}),
          });
          const moves: { from: string; to: string }[] = [];
          engine.on('subscription_state_change', (e) => {
            const s = e.payload.subscription as { previous_state: string; state: string };
            moves.push({ from: s.previous_state, to: s.state });
          });
          const created = await site.subscriptions.create({
            productHandle: 'plan',
            customer: { firstName: 'P', lastName: 'Q', email: 'p@q.co' },
            creditCard: { fullNumber: '4111111111111111', expirationMonth: 1, expirationYear: 2040 },
          });
          let state: string = created.subscription.state;
          const id = created.subscription.id;
          for (const c of commands) {
            try {
              switch (c.kind) {
                case 'cancel':
                  await site.subscriptions.cancel(id);
                  break;
                case 'cancelAtEnd':
                  await site.subscriptions.cancelAtEndOfPeriod(id);
                  break;
                case 'undoCancel':
                  await site.subscriptions.undoCancelAtEndOfPeriod(id);
                  break;
                case 'reactivate':
                  await site.subscriptions.reactivate(id, c);
                  break;
                case 'hold':
                  await site.subscriptions.hold(id);
                  break;
                case 'resume':
                  await site.subscriptions.resume(id);
                  break;
                case 'billingDate':
                  await site.subscriptions.changeBillingDate(id, new Date(clock.now().getTime() + c.days * 86_400_000));
                  break;
                case 'advance':
                  if (c.decline !== 'none')
                    gateway.injectFailure({ outcome: c.decline, keyPrefix: 'renewal:', times: 1 });
                  clock.advance({ days: c.days });
                  await engine.runDue();
                  break;
              }
            } catch (error) {
              // Refused commands are part of the property: they must be BillingErrors and change nothing.
              if (!(error instanceof BillingError)) throw error;
            }
            const now = (await site.subscriptions.get(id)).subscription.state;
            const movesSince = moves.splice(0);
            let walk = state;
            for (const move of movesSince) {
              expect(move.from, 'each recorded move starts where the last ended').toBe(walk);
              expect(
                isAllowedMove(move.from as SubscriptionState, move.to as SubscriptionState),
                `${move.from}->${move.to} is in the table`,
              ).toBe(true);
              walk = move.to;
            }
            expect(now, 'every state change was recorded').toBe(walk);
            state = now;
          }
        },
      ),
      { numRuns: 200 },
    );
  }, 120_000);
});
