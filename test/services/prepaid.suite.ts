import {
  BillingError,
  type BillingEvent,
  createBillingEngine,
  createTestGateway,
  ManualClock,
  type PaymentGateway,
  type Storage,
} from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const CUSTOMER = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };
const REPLENISH = 'prepaid_replenishment:';

async function setup(f: EngineFixture) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const site = f.engine.site('acme');
  const family = await site.catalog.createFamily({ name: 'Plans' });
  await site.catalog.createProduct(family.id, {
    name: 'basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  const events: BillingEvent[] = [];
  f.engine.on('*', (event) => events.push(event));
  return { site, events };
}

type Site = Awaited<ReturnType<typeof setup>>['site'];

/** Advances the clock by whole months, running due work after each. */
async function months(f: EngineFixture, count: number): Promise<void> {
  for (let n = 0; n < count; n++) {
    const next = new Date(f.clock.now());
    next.setUTCMonth(next.getUTCMonth() + 1);
    f.clock.set(next);
    await f.engine.runDue();
  }
}

function signup(site: Site, prepaidConfiguration: Record<string, unknown>, creditCard = VISA) {
  return site.subscriptions.create({
    productHandle: 'basic',
    customer: CUSTOMER,
    creditCard,
    paymentCollectionMethod: 'prepaid',
    prepaidConfiguration,
  });
}

/** The gateway's charges whose key starts with `prefix`, as amounts. */
function charged(f: EngineFixture, prefix: string): number[] {
  return [...f.gateway.charges.entries()].filter(([key]) => key.startsWith(prefix)).map(([, c]) => c.amountInCents);
}

/** Prepaid collection: charges paid from the prepayment balance; the card only funds it. */
export function prepaidSuite(harness: StorageHarness): void {
  describe(`prepaid collection (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-01-15T12:00:00Z');

    it('charges the initial funding to the card and pays the first period from it', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const view = await signup(site, { initialFundingAmountInCents: 5000 });
      const id = view.subscription.id;
      expect(view.subscription.state).toBe('active');
      expect(view.subscription.data.prepaidConfiguration).toMatchObject({ initialFundingAmountInCents: 5000 });
      expect(charged(f, 'signup:')).toEqual([5000]);
      expect(f.gateway.chargeCalls).toBe(1);
      const balances = await site.accounts.balances(id);
      expect(balances.prepaymentsInCents).toBe(4000);
      expect(balances.openInvoicesInCents).toBe(0);
      expect(view.balanceInCents).toBe(-4000);
      const [invoice] = (await site.invoices.list({ subscriptionId: id })).invoices;
      expect(invoice!.status).toBe('paid');
      const [prepayment] = await site.accounts.listPrepayments(id);
      expect(prepayment!.entry).toMatchObject({ amountInCents: 5000, method: 'credit_card', external: false });
      expect(prepayment!.remainingInCents).toBe(4000);
    });

    it('renews from the prepayment balance without charging the card', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const id = (await signup(site, { initialFundingAmountInCents: 5000 })).subscription.id;
      await months(f, 3);
      expect(f.gateway.chargeCalls).toBe(1);
      const after = await site.subscriptions.get(id);
      expect(after.subscription.periodIndex).toBe(3);
      expect(after.subscription.state).toBe('active');
      expect((await site.accounts.balances(id)).prepaymentsInCents).toBe(1000);
      const { invoices } = await site.invoices.list({ subscriptionId: id, perPage: 50 });
      expect(invoices).toHaveLength(4);
      expect(invoices.every((invoice) => invoice.status === 'paid')).toBe(true);
    });

    it('leaves what the balance cannot cover due on an open invoice, charging nothing and starting no dunning', async () => {
      const f = fixture();
      const { site, events } = await setup(f);
      const id = (await signup(site, { initialFundingAmountInCents: 1500 })).subscription.id;
      await months(f, 1);
      expect(f.gateway.chargeCalls).toBe(1);
      const after = await site.subscriptions.get(id);
      expect(after.subscription.state).toBe('active');
      expect(after.balanceInCents).toBe(500);
      const balances = await site.accounts.balances(id);
      expect(balances.prepaymentsInCents).toBe(0);
      expect(balances.openInvoicesInCents).toBe(500);
      const keys = events.filter((e) => e.subjectId === id).map((e) => e.key);
      for (const never of ['payment_failure', 'renewal_failure', 'dunning_step_reached'] as const)
        expect(keys).not.toContain(never);
      // A prepayment pays what is due first; the rest is the balance again.
      await site.accounts.createPrepayment(id, { amountInCents: 2000, memo: 'Top up', details: 'wire', method: 'ach' });
      expect(await site.accounts.balances(id)).toMatchObject({ openInvoicesInCents: 0, prepaymentsInCents: 1500 });
    });

    it('pays a one-time charge from the balance', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const id = (await signup(site, { initialFundingAmountInCents: 5000 })).subscription.id;
      await site.ledger.charge(id, { amountInCents: 1500, memo: 'Extra seats' });
      expect(f.gateway.chargeCalls).toBe(1);
      expect((await site.accounts.balances(id)).prepaymentsInCents).toBe(2500);
    });

    it('auto-replenishes to the target when a draw leaves the balance below the threshold, once', async () => {
      const f = fixture();
      const { site, events } = await setup(f);
      const view = await signup(site, {
        initialFundingAmountInCents: 3000,
        autoReplenish: true,
        replenishThresholdAmountInCents: 1500,
        replenishToAmountInCents: 5000,
      });
      const id = view.subscription.id;
      await f.engine.runDue();
      // 2000 left after the first period: above the threshold, nothing replenished.
      expect(charged(f, REPLENISH)).toEqual([]);
      expect((await site.accounts.balances(id)).prepaymentsInCents).toBe(2000);
      await months(f, 1);
      // The renewal left 1000, below 1500: charged 4000 to bring it back to 5000.
      expect(charged(f, REPLENISH)).toEqual([4000]);
      expect((await site.accounts.balances(id)).prepaymentsInCents).toBe(5000);
      await f.engine.runDue();
      expect(charged(f, REPLENISH)).toEqual([4000]);
      const payments = (await site.subscriptions.transactions(id)).filter((l) => l.type === 'payment');
      expect(payments.map((p) => [p.kind, p.amountInCents])).toEqual([
        ['prepayment', 3000],
        ['prepayment', 4000],
      ]);
      expect(events.filter((e) => e.subjectId === id && e.key === 'payment_success')).toHaveLength(2);
      // Two more months: 5000 -> 4000 -> 3000, both above the threshold.
      await months(f, 2);
      expect(charged(f, REPLENISH)).toEqual([4000]);
      await months(f, 2);
      // 3000 -> 2000 -> 1000: the second draw replenishes again.
      expect(charged(f, REPLENISH)).toEqual([4000, 4000]);
      expect((await site.accounts.balances(id)).prepaymentsInCents).toBe(5000);
    });

    it('replenishes at signup when the first period already leaves the balance below the threshold', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const id = (
        await signup(site, {
          initialFundingAmountInCents: 2000,
          autoReplenish: true,
          replenishThresholdAmountInCents: 1500,
          replenishToAmountInCents: 3000,
        })
      ).subscription.id;
      await f.engine.runDue();
      expect(charged(f, REPLENISH)).toEqual([2000]);
      expect((await site.accounts.balances(id)).prepaymentsInCents).toBe(3000);
    });

    it('a lost replenishment answer is asked about by key later and never charged twice', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const id = (
        await signup(site, {
          initialFundingAmountInCents: 2000,
          autoReplenish: true,
          replenishThresholdAmountInCents: 1500,
          replenishToAmountInCents: 3000,
        })
      ).subscription.id;
      // The gateway takes no money and its answer is lost; the lookup then finds nothing.
      f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: REPLENISH, charged: false });
      await f.engine.runDue();
      expect(charged(f, REPLENISH)).toEqual([]);
      expect((await site.accounts.balances(id)).prepaymentsInCents).toBe(1000);
      // A draw meanwhile finds the replenishment in flight and charges nothing beside it.
      await site.ledger.charge(id, { amountInCents: 100, memo: 'Usage' });
      await f.engine.runDue();
      expect(charged(f, REPLENISH)).toEqual([]);
      // An hour later the row comes back: the same key, so one charge.
      f.clock.set(new Date(f.clock.now().getTime() + 61 * 60_000));
      await f.engine.runDue();
      expect(charged(f, REPLENISH)).toEqual([2000]);
      expect((await site.accounts.balances(id)).prepaymentsInCents).toBe(2900);
      await f.engine.runDue();
      expect(charged(f, REPLENISH)).toHaveLength(1);
      const payments = (await site.subscriptions.transactions(id)).filter((l) => l.type === 'payment');
      expect(payments).toHaveLength(2);
    });

    it('a process that dies after the replenishment charge resumes it under its key: one charge, one prepayment', async () => {
      const storage = await harness.create();
      try {
        const clock = new ManualClock('2026-01-15T12:00:00Z');
        const inner = createTestGateway({ recordCalls: true });
        // After the replenishment's charge the next transaction (its outcome) fails, as a crash would.
        let crashNext = false;
        let crashes = 1;
        const gateway: PaymentGateway = Object.assign(Object.create(inner) as PaymentGateway, {
          charge: async (request: Parameters<PaymentGateway['charge']>[0]) => {
            const result = await inner.charge(request);
            if (request.idempotencyKey.startsWith(REPLENISH) && crashes > 0) {
              crashes -= 1;
              crashNext = true;
            }
            return result;
          },
        });
        const crashing: Storage = Object.assign(Object.create(storage) as Storage, {
          transaction: ((work: never, options: never) => {
            if (crashNext) {
              crashNext = false;
              return Promise.reject(new BillingError('storage', 'The process died.'));
            }
            return storage.transaction(work, options);
          }) as Storage['transaction'],
        });
        const engine = createBillingEngine({ storage: crashing, clock, gateway });
        const f = { engine, clock, storage, gateway: inner } as EngineFixture;
        const { site } = await setup(f);
        const id = (
          await signup(site, {
            initialFundingAmountInCents: 2000,
            autoReplenish: true,
            replenishThresholdAmountInCents: 1500,
            replenishToAmountInCents: 3000,
          })
        ).subscription.id;
        const first = await engine.runDue();
        expect(first.errors).toBe(1);
        expect(charged(f, REPLENISH)).toEqual([2000]);
        expect((await site.accounts.balances(id)).prepaymentsInCents).toBe(1000);
        // The claim lapses; the row runs again and finds its attempt still pending: same key, no new money.
        clock.set(new Date(clock.now().getTime() + 10 * 60_000));
        expect((await engine.runDue()).errors).toBe(0);
        expect(charged(f, REPLENISH)).toEqual([2000]);
        expect(inner.calls.filter((c) => c.idempotencyKey.startsWith(REPLENISH) && c.tookMoney)).toHaveLength(1);
        expect((await site.accounts.balances(id)).prepaymentsInCents).toBe(3000);
        const payments = (await site.subscriptions.transactions(id)).filter((l) => l.type === 'payment');
        expect(payments.map((p) => p.amountInCents)).toEqual([2000, 2000]);
      } finally {
        await (harness.destroy ? harness.destroy(storage) : storage.close());
      }
    });

    it('a lost answer to a replenishment the gateway took settles it from the lookup at once', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const id = (
        await signup(site, {
          initialFundingAmountInCents: 2000,
          autoReplenish: true,
          replenishThresholdAmountInCents: 1500,
          replenishToAmountInCents: 3000,
        })
      ).subscription.id;
      f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: REPLENISH, charged: true });
      await f.engine.runDue();
      expect(charged(f, REPLENISH)).toEqual([2000]);
      expect((await site.accounts.balances(id)).prepaymentsInCents).toBe(3000);
    });

    it('a declined replenishment records a payment failure and leaves the balance as it was', async () => {
      const f = fixture();
      const { site, events } = await setup(f);
      const id = (
        await signup(site, {
          initialFundingAmountInCents: 2000,
          autoReplenish: true,
          replenishThresholdAmountInCents: 1500,
          replenishToAmountInCents: 3000,
        })
      ).subscription.id;
      f.gateway.injectFailure({ outcome: 'declined', keyPrefix: REPLENISH });
      await f.engine.runDue();
      expect(charged(f, REPLENISH)).toEqual([]);
      expect((await site.accounts.balances(id)).prepaymentsInCents).toBe(1000);
      expect(events.filter((e) => e.subjectId === id && e.key === 'payment_failure')).toHaveLength(1);
      expect((await site.subscriptions.get(id)).subscription.state).toBe('active');
      // The next draw tries again.
      await site.ledger.charge(id, { amountInCents: 100, memo: 'Usage' });
      await f.engine.runDue();
      expect(charged(f, REPLENISH)).toEqual([2100]);
    });

    it('refuses a bad prepaid signup before any charge', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const cases: [Record<string, unknown> | undefined, string][] = [
        [undefined, 'Initial funding amount in cents: must be greater than 0.'],
        [{ initialFundingAmountInCents: 0 }, 'Initial funding amount in cents: must be greater than 0.'],
        [{ initialFundingAmountInCents: 12.5 }, 'Initial funding amount in cents: must be an integer.'],
        [
          { initialFundingAmountInCents: 5000, autoReplenish: true, replenishToAmountInCents: 5000 },
          'Replenish threshold amount in cents: must be greater than 0 when auto replenish is on.',
        ],
        [
          {
            initialFundingAmountInCents: 5000,
            autoReplenish: true,
            replenishToAmountInCents: 1000,
            replenishThresholdAmountInCents: 1000,
          },
          'Replenish threshold amount in cents: must be less than the replenish to amount.',
        ],
      ];
      for (const [config, message] of cases) {
        const error = await rejection(
          site.subscriptions.create({
            productHandle: 'basic',
            customer: CUSTOMER,
            creditCard: VISA,
            paymentCollectionMethod: 'prepaid',
            ...(config === undefined ? {} : { prepaidConfiguration: config }),
          }),
        );
        expect(error.code).toBe('validation');
        expect(error.details.map((d) => d.message)).toContain(message);
      }
      const noCard = await rejection(
        site.subscriptions.create({
          productHandle: 'basic',
          customer: CUSTOMER,
          paymentCollectionMethod: 'prepaid',
          prepaidConfiguration: { initialFundingAmountInCents: 5000 },
        }),
      );
      expect(noCard.message).toContain('a prepaid subscription is funded from a card');
      const notPrepaid = await rejection(
        site.subscriptions.create({
          productHandle: 'basic',
          customer: CUSTOMER,
          creditCard: VISA,
          prepaidConfiguration: { initialFundingAmountInCents: 5000 },
        }),
      );
      expect(notPrepaid.details.map((d) => d.message)).toContain(
        'Prepaid configuration: is only accepted with payment collection method prepaid.',
      );
      expect(f.gateway.chargeCalls).toBe(0);
      expect((await site.customers.list()).length).toBe(0);
    });

    it('a declined funding creates no subscription', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const error = await rejection(signup(site, { initialFundingAmountInCents: 5000 }, { ...VISA, fullNumber: '2' }));
      expect(error.code).toBe('payment_declined');
      expect((await site.customers.list()).length).toBe(0);
    });

    it('updates a configuration, and makes an automatic subscription prepaid', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const id = (await signup(site, { initialFundingAmountInCents: 5000 })).subscription.id;
      const updated = await site.prepaid.updateConfiguration(id, {
        autoReplenish: true,
        replenishThresholdAmountInCents: 4500,
        replenishToAmountInCents: 6000,
      });
      expect(updated).toEqual({
        id,
        initialFundingAmountInCents: 5000,
        autoReplenish: true,
        replenishThresholdAmountInCents: 4500,
        replenishToAmountInCents: 6000,
      });
      expect(await site.prepaid.configuration(id)).toEqual(updated);
      // 4000 is below the new threshold: the check scheduled by the update tops it up to 6000.
      await f.engine.runDue();
      expect(charged(f, REPLENISH)).toEqual([2000]);
      expect((await site.accounts.balances(id)).prepaymentsInCents).toBe(6000);

      const automatic = await site.subscriptions.create({
        productHandle: 'basic',
        customer: CUSTOMER,
        creditCard: VISA,
      });
      const made = await site.prepaid.updateConfiguration(automatic.subscription.id, {
        initialFundingAmountInCents: 0,
      });
      expect(made.autoReplenish).toBe(false);
      await months(f, 1);
      const after = await site.subscriptions.get(automatic.subscription.id);
      // Prepaid now: the renewal is left due (no prepayment yet), the card is not charged for it.
      expect(after.balanceInCents).toBe(1000);
      expect(charged(f, 'renewal:')).toEqual([]);
    });

    it('refuses a configuration without a card, with bad amounts, or for a missing subscription', async () => {
      const f = fixture();
      const { site } = await setup(f);
      const remittance = await site.subscriptions.create({
        productHandle: 'basic',
        customer: CUSTOMER,
        paymentCollectionMethod: 'remittance',
      });
      const noCard = await rejection(site.prepaid.updateConfiguration(remittance.subscription.id, {}));
      expect(noCard.details.map((d) => d.attribute)).toContain('payment_profile');
      const id = (await signup(site, { initialFundingAmountInCents: 5000 })).subscription.id;
      const bad = await rejection(
        site.prepaid.updateConfiguration(id, { autoReplenish: true, replenishToAmountInCents: '-5' }),
      );
      expect(bad.code).toBe('validation');
      const unchanged = await site.prepaid.configuration(id);
      expect(unchanged.autoReplenish).toBe(false);
      expect((await rejection(site.prepaid.updateConfiguration(999, {}))).code).toBe('not_found');
      expect((await site.subscriptions.get(remittance.subscription.id)).subscription.data.prepaidConfiguration).toBe(
        undefined,
      );
    });
  });
}
