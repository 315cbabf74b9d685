import {
  type BillingEngine,
  type ChargeResult,
  createBillingEngine,
  ManualClock,
  type PaymentGateway,
  SUBSCRIPTION_WORK_KINDS,
} from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, useEngine } from '../support/engine-harness.js';

/**
 * A renewal (or dunning retry) whose due-work row a command cancels while its charge is at the
 * gateway: the subscription is canceled, put on hold or given a new billing date between the
 * committed attempt (step 1) and the gateway's answer (step 3). Whatever the answer, it is
 * committed once: money taken is a ledger payment, a decline marks the attempt and leaves the
 * charge owed, and a lost answer is looked up by key later, never left pending. Also with both
 * faults at once (the worker dies after the gateway call while the command cancels the row): the
 * attempt's reconciliation row, committed with it, asks the gateway by key.
 */

const START = '2026-03-02T10:00:00Z';
const RENEWAL = '2026-04-02T10:00:00Z';
const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const ADA = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };
const HOUR = 3_600_000;

async function setup(f: EngineFixture) {
  const { site } = await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  const view = await acme.subscriptions.create({ productHandle: 'basic', customer: ADA, creditCard: VISA });
  return { siteId: site.id, acme, id: view.subscription.id };
}

/**
 * An engine on the fixture's storage whose gateway takes the charge and then holds its answer
 * until `open()`; `reached` resolves once a charge is waiting. `answer` may replace what the
 * gateway said (a lost answer, after the money was taken or not). `heldBeforeGateway` holds the
 * call before it reaches the gateway instead (a slow network): the charge is taken at `open()`.
 */
function gated(f: EngineFixture, answer?: (said: ChargeResult) => ChargeResult, heldBeforeGateway = false) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let reached!: () => void;
  const waiting = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const gateway = new Proxy(f.gateway, {
    get(target, property) {
      if (property === 'charge')
        return async (...args: Parameters<PaymentGateway['charge']>) => {
          if (heldBeforeGateway) {
            reached();
            await gate;
          }
          const said = await target.charge(...args);
          if (!heldBeforeGateway) {
            reached();
            await gate;
          }
          return answer ? answer(said) : said;
        };
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as PaymentGateway;
  const engine: BillingEngine = createBillingEngine({ storage: f.storage, clock: f.clock, gateway });
  return { engine, open: () => open(), reached: waiting };
}

/**
 * A worker that dies at its charge: an engine on the fixture's storage whose gateway takes the
 * money (`charged`) or never sees the call, and then never answers, so the worker never reaches
 * its settle step, as a process killed there would not. Its clock stays where it started, so its
 * lease heartbeat never extends the claims it holds: they lapse for the other workers as a dead
 * process's would. `reached` resolves once the charge is at the gateway.
 */
function dying(f: EngineFixture, charged: boolean) {
  let reached!: () => void;
  const waiting = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const gateway = new Proxy(f.gateway, {
    get(target, property) {
      if (property === 'charge')
        return async (...args: Parameters<PaymentGateway['charge']>) => {
          if (charged) await target.charge(...args);
          reached();
          return new Promise<ChargeResult>(() => {});
        };
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as PaymentGateway;
  const engine = createBillingEngine({ storage: f.storage, clock: new ManualClock(f.clock.now()), gateway });
  // Never settles: the worker is dead.
  void engine.runDue();
  return { reached: waiting };
}

async function attempt(f: EngineFixture, siteId: number, key: string) {
  return f.storage.transaction((tx) => tx.payments.findByKey(siteId, key));
}

async function payments(acme: ReturnType<BillingEngine['site']>, id: number) {
  return (await acme.subscriptions.transactions(id))
    .filter((t) => t.type === 'payment')
    .map((t) => ({ amountInCents: t.amountInCents, gatewayTransactionId: t.gatewayTransactionId }));
}

async function eventKeys(acme: ReturnType<BillingEngine['site']>, id: number): Promise<string[]> {
  return (await acme.events.listForSubscription(id, { perPage: 200 })).map((e) => e.event.key);
}

async function openWork(f: EngineFixture, siteId: number, subjectId: number) {
  return (await f.storage.transaction((tx) => tx.dueWork.pendingFor(siteId, subjectId, SUBSCRIPTION_WORK_KINDS))).map(
    (w) => w.kind,
  );
}

async function openReconciliations(f: EngineFixture, siteId: number) {
  const far = new Date('2100-01-01T00:00:00Z');
  return f.storage.transaction((tx) => tx.dueWork.countDue({ until: far, kinds: ['reconcile_payment'], siteId }));
}

/** Renewal charges answered after a command canceled their due-work row, on every storage. */
export function renewalCancelInFlightSuite(harness: StorageHarness): void {
  describe(`renewal charge answered after its due work was canceled (${harness.name})`, () => {
    const fixture = useEngine(harness, START);

    it('money taken while the subscription was canceled is recorded once; it stays canceled, with nothing scheduled', async () => {
      const f = fixture();
      const { siteId, acme, id } = await setup(f);
      const racing = gated(f);
      f.clock.set(RENEWAL);
      const run = racing.engine.runDue();
      await racing.reached;
      expect((await acme.subscriptions.cancel(id)).subscription.state).toBe('cancelled');
      racing.open();
      await run;

      const key = `renewal:${id}:1`;
      const taken = f.gateway.charges.get(key)!;
      expect(taken.amountInCents).toBe(1000);
      expect(await attempt(f, siteId, key)).toMatchObject({
        status: 'succeeded',
        gatewayTransactionId: taken.transactionId,
      });
      expect((await attempt(f, siteId, key))!.transactionId).not.toBeNull();
      // The signup's payment and the renewal's: the money taken is on the ledger, once.
      expect(await payments(acme, id)).toEqual([
        { amountInCents: 1000, gatewayTransactionId: expect.any(String) },
        { amountInCents: 1000, gatewayTransactionId: taken.transactionId },
      ]);
      const after = await acme.subscriptions.get(id);
      expect(after.subscription.state).toBe('cancelled');
      expect(after.balanceInCents).toBe(0);
      expect(await openWork(f, siteId, id)).toEqual([]);
      expect(await openReconciliations(f, siteId)).toBe(0);
      const keys = await eventKeys(acme, id);
      expect(keys.filter((k) => k === 'payment_success')).toHaveLength(2);
      expect(keys).not.toContain('renewal_success');

      // Nothing more happens later: no second charge, no renewal of a canceled subscription.
      f.clock.set('2026-07-01T00:00:00Z');
      await f.engine.runDue();
      expect(f.gateway.chargeCalls).toBe(2);
      expect(await payments(acme, id)).toHaveLength(2);
      expect((await acme.subscriptions.get(id)).subscription.state).toBe('cancelled');
    });

    it('a decline answered after the cancel marks the attempt declined; the charge stays owed and no dunning starts', async () => {
      const f = fixture();
      const { siteId, acme, id } = await setup(f);
      f.gateway.injectFailure({ outcome: 'declined', keyPrefix: 'renewal:' });
      const racing = gated(f);
      f.clock.set(RENEWAL);
      const run = racing.engine.runDue();
      await racing.reached;
      await acme.subscriptions.cancel(id);
      racing.open();
      const summary = await run;
      expect(summary).toMatchObject({ errors: 0 });

      const key = `renewal:${id}:1`;
      expect(await attempt(f, siteId, key)).toMatchObject({
        status: 'declined',
        message: 'Bogus Gateway: Forced failure',
        transactionId: null,
      });
      const after = await acme.subscriptions.get(id);
      expect(after.subscription.state).toBe('cancelled');
      expect(after.balanceInCents).toBe(1000);
      expect(await payments(acme, id)).toHaveLength(1);
      expect(await openWork(f, siteId, id)).toEqual([]);
      const keys = await eventKeys(acme, id);
      expect(keys).toContain('payment_failure');
      expect(keys).not.toContain('dunning_step_reached');

      f.clock.set('2026-07-01T00:00:00Z');
      await f.engine.runDue();
      expect(f.gateway.chargeCalls).toBe(2);
      expect((await acme.subscriptions.get(id)).subscription.state).toBe('cancelled');
    });

    for (const charged of [true, false]) {
      it(`a lost answer after the cancel is looked up by key later (${charged ? 'money taken' : 'nothing taken'})`, async () => {
        const f = fixture();
        const { siteId, acme, id } = await setup(f);
        f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'renewal:', charged });
        const racing = gated(f);
        f.clock.set(RENEWAL);
        const run = racing.engine.runDue();
        await racing.reached;
        await acme.subscriptions.cancel(id);
        racing.open();
        await run;

        const key = `renewal:${id}:1`;
        expect(await attempt(f, siteId, key)).toMatchObject({ status: 'unknown' });
        // Not stranded: its reconciliation is due.
        expect(await openReconciliations(f, siteId)).toBe(1);

        f.clock.set(new Date(Date.parse(RENEWAL) + 2 * HOUR));
        await f.engine.runDue();
        const after = await acme.subscriptions.get(id);
        expect(after.subscription.state).toBe('cancelled');
        if (charged) {
          const taken = f.gateway.charges.get(key)!;
          expect(await attempt(f, siteId, key)).toMatchObject({
            status: 'succeeded',
            gatewayTransactionId: taken.transactionId,
          });
          expect(await payments(acme, id)).toEqual([
            { amountInCents: 1000, gatewayTransactionId: expect.any(String) },
            { amountInCents: 1000, gatewayTransactionId: taken.transactionId },
          ]);
          expect(after.balanceInCents).toBe(0);
        } else {
          expect(f.gateway.charges.has(key)).toBe(false);
          expect(await attempt(f, siteId, key)).toMatchObject({ status: 'failed' });
          expect(await payments(acme, id)).toHaveLength(1);
          expect(after.balanceInCents).toBe(1000);
        }
        expect(await openReconciliations(f, siteId)).toBe(0);
        // Never charged again: the key was only looked up.
        expect(f.gateway.chargeCalls).toBe(2);

        f.clock.set('2026-07-01T00:00:00Z');
        await f.engine.runDue();
        expect(f.gateway.chargeCalls).toBe(2);
        expect(await payments(acme, id)).toHaveLength(charged ? 2 : 1);
      });
    }

    it('a lost answer whose renewal is canceled only after the answer was lost is still looked up', async () => {
      const f = fixture();
      const { siteId, acme, id } = await setup(f);
      f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'renewal:', charged: true });
      f.clock.set(RENEWAL);
      await f.engine.runDue();
      const key = `renewal:${id}:1`;
      expect(await attempt(f, siteId, key)).toMatchObject({ status: 'unknown' });
      // The renewal row waits to ask again; the merchant cancels before it does.
      await acme.subscriptions.cancel(id);
      expect(await openWork(f, siteId, id)).toEqual([]);
      f.clock.set(new Date(Date.parse(RENEWAL) + 2 * HOUR));
      await f.engine.runDue();
      expect(await attempt(f, siteId, key)).toMatchObject({ status: 'succeeded' });
      expect(await payments(acme, id)).toHaveLength(2);
      expect((await acme.subscriptions.get(id)).balanceInCents).toBe(0);
      expect(f.gateway.chargeCalls).toBe(2);
    });

    it('an answer that comes after the reconciliation already settled the attempt changes nothing', async () => {
      const f = fixture();
      const { siteId, acme, id } = await setup(f);
      // The first answer is lost and nothing was taken: the renewal row asks again an hour later.
      f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'renewal:', charged: false });
      f.clock.set(RENEWAL);
      await f.engine.runDue();
      const key = `renewal:${id}:1`;
      expect(await attempt(f, siteId, key)).toMatchObject({ status: 'unknown' });
      // The renewal comes back, finds no charge under the key and sends it again; the answer is
      // held while the merchant cancels.
      const slow = gated(f);
      f.clock.set(new Date(Date.parse(RENEWAL) + 2 * HOUR));
      // Only the subscription's own work in this run: the reconciliation row is left for the next.
      const run = slow.engine.runDue({ siteId, subjectId: id });
      await slow.reached;
      await acme.subscriptions.cancel(id);
      // Meanwhile the attempt's reconciliation finds the charge by key and settles it.
      f.clock.set(new Date(Date.parse(RENEWAL) + 5 * HOUR));
      await f.engine.runDue();
      const settled = await attempt(f, siteId, key);
      expect(settled).toMatchObject({
        status: 'succeeded',
        gatewayTransactionId: f.gateway.charges.get(key)!.transactionId,
      });
      expect(await payments(acme, id)).toHaveLength(2);
      // The held answer arrives last: the attempt is settled already, so nothing more is written.
      slow.open();
      expect(await run).toMatchObject({ errors: 0 });
      expect(await attempt(f, siteId, key)).toEqual(settled);
      expect(await payments(acme, id)).toHaveLength(2);
      expect((await eventKeys(acme, id)).filter((k) => k === 'payment_success')).toHaveLength(2);
      expect((await acme.subscriptions.get(id)).balanceInCents).toBe(0);
      expect(await openReconciliations(f, siteId)).toBe(0);
    });

    it('money taken while the subscription was put on hold is recorded; it stays on hold', async () => {
      const f = fixture();
      const { siteId, acme, id } = await setup(f);
      const racing = gated(f);
      f.clock.set(RENEWAL);
      const run = racing.engine.runDue();
      await racing.reached;
      expect((await acme.subscriptions.hold(id)).subscription.state).toBe('on_hold');
      racing.open();
      await run;
      expect(await attempt(f, siteId, `renewal:${id}:1`)).toMatchObject({ status: 'succeeded' });
      const after = await acme.subscriptions.get(id);
      expect(after.subscription.state).toBe('on_hold');
      expect(after.balanceInCents).toBe(0);
      expect(await payments(acme, id)).toHaveLength(2);
      expect(await openWork(f, siteId, id)).toEqual([]);
    });

    it('money taken while the billing date was moved is recorded; the next renewal charges only its own period', async () => {
      const f = fixture();
      const { siteId, acme, id } = await setup(f);
      const racing = gated(f);
      f.clock.set(RENEWAL);
      const run = racing.engine.runDue();
      await racing.reached;
      await acme.subscriptions.changeBillingDate(id, '2026-04-20T10:00:00Z');
      racing.open();
      await run;
      expect(await attempt(f, siteId, `renewal:${id}:1`)).toMatchObject({ status: 'succeeded' });
      expect((await acme.subscriptions.get(id)).balanceInCents).toBe(0);
      // The moved renewal is the one left scheduled, and it charges one period.
      f.clock.set('2026-04-20T10:00:00Z');
      await f.engine.runDue();
      expect(f.gateway.charges.get(`renewal:${id}:2`)?.amountInCents).toBe(1000);
      const after = await acme.subscriptions.get(id);
      expect(after.subscription.state).toBe('active');
      expect(after.balanceInCents).toBe(0);
      expect(await payments(acme, id)).toHaveLength(3);
    });

    it('a billing date moved to now while the charge is in flight bills the next period without taking the first one again', async () => {
      const f = fixture();
      const { siteId, acme, id } = await setup(f);
      const racing = gated(f);
      f.clock.set(RENEWAL);
      const run = racing.engine.runDue();
      await racing.reached;
      // The moved renewal runs at once, beside the first period's charge still at the gateway.
      await acme.subscriptions.changeBillingDate(id, RENEWAL);
      expect(f.gateway.charges.get(`renewal:${id}:2`)?.amountInCents).toBe(1000);
      racing.open();
      await run;
      expect(await attempt(f, siteId, `renewal:${id}:1`)).toMatchObject({ status: 'succeeded' });
      const after = await acme.subscriptions.get(id);
      expect(after.balanceInCents).toBe(0);
      expect((await payments(acme, id)).map((p) => p.amountInCents)).toEqual([1000, 1000, 1000]);
    });

    it('a dunning retry answered after the cancel records the money it took', async () => {
      const f = fixture();
      const { siteId, acme, id } = await setup(f);
      f.gateway.injectFailure({ outcome: 'declined', keyPrefix: 'renewal:' });
      f.clock.set(RENEWAL);
      await f.engine.runDue();
      expect((await acme.subscriptions.get(id)).subscription.state).toBe('past_due');
      const racing = gated(f);
      f.clock.set(new Date(Date.parse(RENEWAL) + 24 * HOUR));
      const run = racing.engine.runDue();
      await racing.reached;
      await acme.subscriptions.cancel(id);
      racing.open();
      await run;
      const key = `dunning:${id}:1:1`;
      expect(await attempt(f, siteId, key)).toMatchObject({
        status: 'succeeded',
        gatewayTransactionId: f.gateway.charges.get(key)!.transactionId,
      });
      const after = await acme.subscriptions.get(id);
      expect(after.subscription.state).toBe('cancelled');
      expect(after.balanceInCents).toBe(0);
      expect(await payments(acme, id)).toHaveLength(2);
      expect(await openWork(f, siteId, id)).toEqual([]);
    });

    it('a worker whose lease lapsed while the gateway answered leaves the item to the worker that took it: one payment', async () => {
      const f = fixture();
      const { siteId, acme, id } = await setup(f);
      const slow = gated(f);
      f.clock.set(RENEWAL);
      const run = slow.engine.runDue();
      await slow.reached;
      // The first worker's lease lapses; another worker takes the item, resumes the attempt by its
      // key (the gateway answers the same charge) and settles it.
      f.clock.set(new Date(Date.parse(RENEWAL) + 10 * 60_000));
      const other = await f.engine.runDue({ until: new Date(RENEWAL) });
      expect(other).toMatchObject({ renewed: 1, errors: 0 });
      slow.open();
      expect(await run).toMatchObject({ renewed: 0, errors: 0 });

      const key = `renewal:${id}:1`;
      expect(f.gateway.charges.size).toBe(2);
      expect(await attempt(f, siteId, key)).toMatchObject({
        status: 'succeeded',
        gatewayTransactionId: f.gateway.charges.get(key)!.transactionId,
      });
      expect(await payments(acme, id)).toHaveLength(2);
      const after = await acme.subscriptions.get(id);
      expect(after.subscription.state).toBe('active');
      expect(after.balanceInCents).toBe(0);
      expect((await eventKeys(acme, id)).filter((k) => k === 'renewal_success')).toHaveLength(1);
      // The next period is scheduled once.
      expect((await openWork(f, siteId, id)).filter((k) => k === 'renewal')).toHaveLength(1);
      expect(await openReconciliations(f, siteId)).toBe(0);
    });

    // Both faults at once: the worker dies between the gateway call and its settle step, and a
    // command cancels the item's row meanwhile, so neither the worker nor the row ever comes back.
    // The attempt's reconciliation row, committed with the attempt, settles it by key.
    describe('the worker dies after the gateway call while a command cancels the row', () => {
      const LATER = new Date(Date.parse(RENEWAL) + 2 * HOUR);

      it('money taken before a cancel is recorded once by the reconciliation; never charged again', async () => {
        const f = fixture();
        const { siteId, acme, id } = await setup(f);
        f.clock.set(RENEWAL);
        const dead = dying(f, true);
        await dead.reached;
        expect((await acme.subscriptions.cancel(id)).subscription.state).toBe('cancelled');
        const key = `renewal:${id}:1`;
        expect(await attempt(f, siteId, key)).toMatchObject({ status: 'pending' });
        expect(await openReconciliations(f, siteId)).toBe(1);

        // Within the hour nothing is asked: a live worker could still be waiting for its answer.
        expect(await f.engine.runDue()).toMatchObject({ processed: 0 });
        f.clock.set(LATER);
        expect(await f.engine.runDue()).toMatchObject({ processed: 1, errors: 0 });
        const taken = f.gateway.charges.get(key)!;
        expect(await attempt(f, siteId, key)).toMatchObject({
          status: 'succeeded',
          gatewayTransactionId: taken.transactionId,
        });
        expect(await payments(acme, id)).toEqual([
          { amountInCents: 1000, gatewayTransactionId: expect.any(String) },
          { amountInCents: 1000, gatewayTransactionId: taken.transactionId },
        ]);
        const after = await acme.subscriptions.get(id);
        expect(after.subscription.state).toBe('cancelled');
        expect(after.balanceInCents).toBe(0);
        expect(await openReconciliations(f, siteId)).toBe(0);
        expect(await openWork(f, siteId, id)).toEqual([]);
        const keys = await eventKeys(acme, id);
        expect(keys.filter((k) => k === 'payment_success')).toHaveLength(2);
        expect(keys).not.toContain('renewal_success');

        f.clock.set('2026-07-01T00:00:00Z');
        await f.engine.runDue();
        expect(f.gateway.chargeCalls).toBe(2);
        expect(await payments(acme, id)).toHaveLength(2);
      });

      it('a charge the gateway never saw is found not taken: the attempt fails and the period stays owed', async () => {
        const f = fixture();
        const { siteId, acme, id } = await setup(f);
        f.clock.set(RENEWAL);
        const dead = dying(f, false);
        await dead.reached;
        await acme.subscriptions.cancel(id);
        f.clock.set(LATER);
        expect(await f.engine.runDue()).toMatchObject({ errors: 0 });
        const key = `renewal:${id}:1`;
        expect(f.gateway.charges.has(key)).toBe(false);
        expect(await attempt(f, siteId, key)).toMatchObject({ status: 'failed', transactionId: null });
        const after = await acme.subscriptions.get(id);
        expect(after.subscription.state).toBe('cancelled');
        expect(after.balanceInCents).toBe(1000);
        expect(await payments(acme, id)).toHaveLength(1);
        expect(await openReconciliations(f, siteId)).toBe(0);
        const keys = await eventKeys(acme, id);
        expect(keys).toContain('payment_failure');
        expect(keys).not.toContain('dunning_step_reached');
        // Only the signup was ever charged.
        expect(f.gateway.chargeCalls).toBe(1);
      });

      it('money taken before the subscription was put on hold is recorded; it stays on hold', async () => {
        const f = fixture();
        const { siteId, acme, id } = await setup(f);
        f.clock.set(RENEWAL);
        const dead = dying(f, true);
        await dead.reached;
        await acme.subscriptions.hold(id);
        f.clock.set(LATER);
        await f.engine.runDue();
        expect(await attempt(f, siteId, `renewal:${id}:1`)).toMatchObject({ status: 'succeeded' });
        const after = await acme.subscriptions.get(id);
        expect(after.subscription.state).toBe('on_hold');
        expect(after.balanceInCents).toBe(0);
        expect(await payments(acme, id)).toHaveLength(2);
        expect(await openReconciliations(f, siteId)).toBe(0);
      });

      it('money taken before a billing-date change is recorded once; the moved renewal charges only its own period', async () => {
        const f = fixture();
        const { siteId, acme, id } = await setup(f);
        f.clock.set(RENEWAL);
        const dead = dying(f, true);
        await dead.reached;
        await acme.subscriptions.changeBillingDate(id, '2026-04-20T10:00:00Z');
        f.clock.set(LATER);
        await f.engine.runDue();
        const key = `renewal:${id}:1`;
        expect(await attempt(f, siteId, key)).toMatchObject({
          status: 'succeeded',
          gatewayTransactionId: f.gateway.charges.get(key)!.transactionId,
        });
        expect((await acme.subscriptions.get(id)).balanceInCents).toBe(0);
        f.clock.set('2026-04-20T10:00:00Z');
        await f.engine.runDue();
        expect(f.gateway.charges.get(`renewal:${id}:2`)?.amountInCents).toBe(1000);
        const after = await acme.subscriptions.get(id);
        expect(after.subscription.state).toBe('active');
        expect(after.balanceInCents).toBe(0);
        expect((await payments(acme, id)).map((p) => p.amountInCents)).toEqual([1000, 1000, 1000]);
        expect(await openReconciliations(f, siteId)).toBe(0);
        expect(f.gateway.chargeCalls).toBe(3);
      });

      it('a billing date moved to now bills the next period at once, and the dead charge is recorded later, once', async () => {
        const f = fixture();
        const { siteId, acme, id } = await setup(f);
        f.clock.set(RENEWAL);
        const dead = dying(f, true);
        await dead.reached;
        await acme.subscriptions.changeBillingDate(id, RENEWAL);
        // The moved renewal left the first period's charge, still open, out of what it collected.
        expect(f.gateway.charges.get(`renewal:${id}:2`)?.amountInCents).toBe(1000);
        expect(await attempt(f, siteId, `renewal:${id}:1`)).toMatchObject({ status: 'pending' });
        f.clock.set(LATER);
        await f.engine.runDue();
        expect(await attempt(f, siteId, `renewal:${id}:1`)).toMatchObject({ status: 'succeeded' });
        const after = await acme.subscriptions.get(id);
        expect(after.subscription.state).toBe('active');
        expect(after.balanceInCents).toBe(0);
        expect((await payments(acme, id)).map((p) => p.amountInCents)).toEqual([1000, 1000, 1000]);
        expect(await openReconciliations(f, siteId)).toBe(0);
      });

      it('money taken before a migration is recorded once by the reconciliation', async () => {
        const f = fixture();
        const { siteId, acme, id } = await setup(f);
        const family = (await acme.catalog.listFamilies())[0]!;
        await acme.catalog.createProduct(family.id, {
          name: 'Pro',
          handle: 'pro',
          priceInCents: 3000,
          interval: 1,
          intervalUnit: 'month',
        });
        f.clock.set(RENEWAL);
        const dead = dying(f, true);
        await dead.reached;
        // A migration that starts a new period cancels the renewal row.
        await acme.subscriptions.migrate(id, { productHandle: 'pro' });
        const key = `renewal:${id}:1`;
        expect(await attempt(f, siteId, key)).toMatchObject({ status: 'pending' });
        f.clock.set(LATER);
        await f.engine.runDue();
        expect(await attempt(f, siteId, key)).toMatchObject({
          status: 'succeeded',
          gatewayTransactionId: f.gateway.charges.get(key)!.transactionId,
        });
        expect((await acme.subscriptions.get(id)).product.product.handle).toBe('pro');
        // Signup, renewal and migration: each charge the gateway took is one ledger payment of its amount.
        expect([...f.gateway.charges.keys()].filter((k) => k.startsWith(`migration:${id}:`))).toHaveLength(1);
        const taken = [...f.gateway.charges.values()]
          .map((c) => ({ amountInCents: c.amountInCents, gatewayTransactionId: c.transactionId }))
          .sort((a, b) => a.gatewayTransactionId.localeCompare(b.gatewayTransactionId));
        expect(
          (await payments(acme, id)).sort((a, b) =>
            String(a.gatewayTransactionId).localeCompare(String(b.gatewayTransactionId)),
          ),
        ).toEqual(taken);
        expect(f.gateway.chargeCalls).toBe(3);
        expect(await openReconciliations(f, siteId)).toBe(0);
        // The migration collected only its own difference (pro less the unused basic period), not
        // the basic period whose charge was still open: nothing is paid twice.
        const migration = [...f.gateway.charges].find(([k]) => k.startsWith(`migration:${id}:`));
        expect(migration?.[1].amountInCents).toBe(2000);
        expect((await acme.subscriptions.get(id)).balanceInCents).toBe(0);
      });

      it('a dunning retry whose worker died while the subscription was canceled is recorded once', async () => {
        const f = fixture();
        const { siteId, acme, id } = await setup(f);
        f.gateway.injectFailure({ outcome: 'declined', keyPrefix: 'renewal:' });
        f.clock.set(RENEWAL);
        await f.engine.runDue();
        expect((await acme.subscriptions.get(id)).subscription.state).toBe('past_due');
        f.clock.set(new Date(Date.parse(RENEWAL) + 24 * HOUR));
        const dead = dying(f, true);
        await dead.reached;
        await acme.subscriptions.cancel(id);
        f.clock.set(new Date(Date.parse(RENEWAL) + 26 * HOUR));
        await f.engine.runDue();
        const key = `dunning:${id}:1:1`;
        expect(await attempt(f, siteId, key)).toMatchObject({
          status: 'succeeded',
          gatewayTransactionId: f.gateway.charges.get(key)!.transactionId,
        });
        const after = await acme.subscriptions.get(id);
        expect(after.subscription.state).toBe('cancelled');
        expect(after.balanceInCents).toBe(0);
        expect(await payments(acme, id)).toHaveLength(2);
        expect(await openReconciliations(f, siteId)).toBe(0);
      });

      it('a live worker whose call reaches the gateway only after the reconciliation found nothing taken records the money', async () => {
        const f = fixture();
        const { siteId, acme, id } = await setup(f);
        const slow = gated(f, undefined, true);
        f.clock.set(RENEWAL);
        const run = slow.engine.runDue();
        await slow.reached;
        await acme.subscriptions.cancel(id);
        f.clock.set(LATER);
        await f.engine.runDue();
        const key = `renewal:${id}:1`;
        expect(await attempt(f, siteId, key)).toMatchObject({ status: 'failed' });
        expect((await acme.subscriptions.get(id)).balanceInCents).toBe(1000);
        // The call arrives now and the money is taken: its answer is recorded after all, once.
        slow.open();
        expect(await run).toMatchObject({ errors: 0 });
        const taken = f.gateway.charges.get(key)!;
        expect(await attempt(f, siteId, key)).toMatchObject({
          status: 'succeeded',
          gatewayTransactionId: taken.transactionId,
        });
        expect(await payments(acme, id)).toEqual([
          { amountInCents: 1000, gatewayTransactionId: expect.any(String) },
          { amountInCents: 1000, gatewayTransactionId: taken.transactionId },
        ]);
        expect((await acme.subscriptions.get(id)).balanceInCents).toBe(0);
        expect(await openReconciliations(f, siteId)).toBe(0);
        f.clock.set('2026-07-01T00:00:00Z');
        await f.engine.runDue();
        expect(f.gateway.chargeCalls).toBe(2);
        expect(await payments(acme, id)).toHaveLength(2);
      });

      it('without a command, the worker that takes the lapsed lease settles the renewal and its reconciliation ends', async () => {
        const f = fixture();
        const { siteId, acme, id } = await setup(f);
        f.clock.set(RENEWAL);
        const dead = dying(f, true);
        await dead.reached;
        f.clock.set(new Date(Date.parse(RENEWAL) + 10 * 60_000));
        expect(await f.engine.runDue({ until: new Date(RENEWAL) })).toMatchObject({ renewed: 1, errors: 0 });
        expect(await openReconciliations(f, siteId)).toBe(0);
        f.clock.set(LATER);
        expect(await f.engine.runDue()).toMatchObject({ processed: 0 });
        expect(await attempt(f, siteId, `renewal:${id}:1`)).toMatchObject({ status: 'succeeded' });
        expect(await payments(acme, id)).toHaveLength(2);
        expect((await acme.subscriptions.get(id)).balanceInCents).toBe(0);
        // The dead worker's call and the resumed one share the key: money taken once.
        expect(f.gateway.charges.size).toBe(2);
      });
    });
  });
}
