import type { BillingError, BillingEvent, PaymentGateway, TestGateway, TransactionRecord } from 'billing-engine';
import { serializeAllocationPreview } from 'billing-engine/chargify';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { AllocationService } from '../../src/services/allocation-service.js';
import { runCommand } from '../../src/services/command-runner.js';
import {
  planSignupComponents,
  renewalComponentLines,
  writeSignupComponents,
} from '../../src/services/component-billing.js';
import type { SubscriptionDeps } from '../../src/services/subscription-service.js';
import { customerFixture, subscriptionFixture } from '../../src/testing/conformance/billing-fixtures.js';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const T14 = 'Quantity: must be either 1 (on) or 0 (off).';

/** The services under test over the fixture's storage, clock and gateway, with a recording emitter. */
function allocationServices(f: EngineFixture) {
  const events: BillingEvent[] = [];
  const deps: SubscriptionDeps = {
    storage: f.storage,
    clock: f.clock,
    gateway: f.gateway,
    emitter: { emit: (_key, event) => events.push(event) },
  };
  return { deps, allocations: new AllocationService(deps), events };
}

/**
 * Site `acme` (USD, UTC) with product `basic` (30.00 monthly), a 14-day trial product, and the
 * components Seats (9.00 per seat), SSL (on/off, 15.00) and Data (metered, 0.50 per GB); plus a
 * component of another family. A subscription to `basic` signed up at the clock's instant.
 */
async function setup(f: EngineFixture) {
  const { site } = await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  const other = await acme.catalog.createFamily({ name: 'Other' });
  await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 3000,
    interval: 1,
    intervalUnit: 'month',
  });
  await acme.catalog.createProduct(family.id, {
    name: 'Trial',
    handle: 'trial',
    priceInCents: 3000,
    interval: 1,
    intervalUnit: 'month',
    trialInterval: 14,
    trialIntervalUnit: 'day',
    trialPriceInCents: 0,
  });
  const seats = await acme.components.create(family.id, {
    name: 'Seats',
    kind: 'quantity_based',
    unitName: 'seat',
    handle: 'seats',
    unitPrice: '9',
  });
  const ssl = await acme.components.create(family.id, { name: 'SSL', kind: 'on_off', handle: 'ssl', unitPrice: '15' });
  const data = await acme.components.create(family.id, {
    name: 'Data',
    kind: 'metered',
    unitName: 'GB',
    handle: 'data',
    unitPrice: '0.5',
  });
  const foreign = await acme.components.create(other.id, {
    name: 'Foreign',
    kind: 'quantity_based',
    unitName: 'thing',
    unitPrice: '1',
  });
  const sub = await acme.subscriptions.create({
    productHandle: 'basic',
    customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
    creditCard: VISA,
  });
  return {
    ...allocationServices(f),
    acme,
    siteId: site.id,
    familyId: family.id,
    subId: sub.subscription.id,
    productId: sub.product.product.id,
    seats: seats.component.id,
    ssl: ssl.component.id,
    data: data.component.id,
    foreign: foreign.component.id,
  };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** type, kind, amount, ending balance and component of each line after the signup's two. */
async function linesAfterSignup(f: EngineFixture, subId: number) {
  const all: TransactionRecord[] = await f.engine.site('acme').subscriptions.transactions(subId);
  return all.slice(2).map((l) => [l.type, l.kind, l.amountInCents, l.endingBalanceInCents, l.componentId]);
}

/** Everything a rejected command must leave as it was. */
async function trace(f: EngineFixture, s: Setup) {
  return f.storage.transaction(async (tx) => ({
    subscription: await tx.subscriptions.findById(s.siteId, s.subId),
    lines: await tx.ledger.listForSubscription(s.siteId, s.subId),
    outbox: await tx.outbox.listAfter(s.siteId, 0, 10_000),
    components: await tx.subscriptionComponents.listForSubscription(s.siteId, s.subId),
    allocations: await tx.subscriptionComponents.listAllocations(s.siteId, s.subId),
    usages: await tx.subscriptionComponents.listUsages(s.siteId, s.subId, s.data),
    chargeCalls: f.gateway.chargeCalls,
  }));
}

const keysOf = (events: readonly BillingEvent[]) => events.map((e) => e.key);

/**
 * The test gateway behind a gate: while held, every `charge` call waits (after counting itself)
 * until the gate is opened, so the command that reached the gateway keeps its claim while the
 * others run, on every adapter. `until` resolves when a condition over the counts holds, checked
 * whenever a charge arrives or a test calls `bump`.
 */
function slowGateway(inner: TestGateway) {
  let open: Promise<void> = Promise.resolve();
  let inFlight = 0;
  const waiters: { cond: () => boolean; resolve: () => void }[] = [];
  const state = {
    entered: 0,
    maxInFlight: 0,
    bump() {
      for (const waiter of [...waiters]) {
        if (waiter.cond()) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
    },
    until(cond: () => boolean): Promise<void> {
      return cond() ? Promise.resolve() : new Promise((resolve) => waiters.push({ cond, resolve }));
    },
    /** Holds every charge from now until the returned function is called. */
    hold(): () => void {
      let release!: () => void;
      open = new Promise((resolve) => {
        release = resolve;
      });
      return release;
    },
  };
  const gateway: PaymentGateway = {
    name: inner.name,
    supportsRefunds: inner.supportsRefunds,
    tokenize: (card) => inner.tokenize(card),
    refund: (request) => inner.refund(request),
    lookup: (key) => inner.lookup(key),
    async charge(request) {
      state.entered += 1;
      inFlight += 1;
      state.maxInFlight = Math.max(state.maxInFlight, inFlight);
      state.bump();
      try {
        await open;
        return await inner.charge(request);
      } finally {
        inFlight -= 1;
      }
    },
  };
  return Object.assign(state, { gateway });
}

/** Allocation changes, previews, usage and the component billing functions, on every adapter. April has 30 days. */
export function allocationsSuite(harness: StorageHarness): void {
  describe(`component allocations and usage (${harness.name})`, () => {
    const fixture = useEngine(harness, '2027-04-01T00:00:00Z');

    describe('allocation changes', () => {
      it('charges a prorated upgrade and collects it now, with every line, the attempt and the events', async () => {
        const f = fixture();
        const s = await setup(f);
        f.clock.set('2027-04-11T00:00:00Z');
        const result = await s.allocations.allocate('acme', s.subId, s.seats, { quantity: 5 });
        // 5 seats cost 45.00 a period; 20 of 30 days remain: 30.00.
        expect(result.direction).toBe('upgrade');
        expect([result.chargeInCents, result.creditInCents]).toEqual([3000, 0]);
        expect(await linesAfterSignup(f, s.subId)).toEqual([
          ['charge', 'quantity_based_component', 3000, 3000, s.seats],
          ['payment', 'component_proration', 3000, 0, s.seats],
        ]);
        const charge = result.line!;
        expect(charge.memo).toBe('Seats: 0 to 5 seat (prorated)');
        expect(charge.periodIndex).toBe(0);
        expect(result.payment?.status).toBe('succeeded');
        expect(result.payment?.amountInCents).toBe(3000);
        expect(result.payment?.transaction?.memo).toBe('Payment for: Seats: 0 to 5 seat (prorated)');
        const attempt = await f.storage.transaction((tx) => tx.payments.listUnresolved(new Date('2100-01-01'), 10));
        expect(attempt).toEqual([]);
        expect(
          [...f.gateway.charges.keys()].filter((k) => k.startsWith(`allocation:${s.subId}:${s.seats}:`)),
        ).toHaveLength(1);
        expect(result.allocation).toMatchObject({
          subscriptionId: s.subId,
          componentId: s.seats,
          previousQuantity: 0,
          quantity: 5,
          memo: null,
          upgradeCharge: 'prorated',
          downgradeCredit: 'prorated',
          accrueCharge: false,
        });
        expect(result.subscriptionComponent).toMatchObject({
          allocatedQuantity: 5,
          componentVersion: 1,
          unitBalance: 0,
        });
        expect(keysOf(s.events)).toEqual(['component_allocation_change', 'payment_success']);
        expect(s.events[0]!.payload).toEqual({
          component: { id: s.seats, name: 'Seats', unit_name: 'seat', kind: 'quantity_based_component' },
          subscription: { id: s.subId, name: 'Basic', state: 'active' },
          product: { id: s.productId, handle: 'basic', name: 'Basic' },
          previous_allocation: 0,
          new_allocation: 5,
          memo: null,
          timestamp: '2027-04-11T00:00:00Z',
        });
        expect(await s.allocations.listAllocations('acme', s.subId)).toEqual([result.allocation]);
      });

      it('credits a prorated downgrade to the balance, and a later upgrade collects only what credit leaves', async () => {
        const f = fixture();
        const s = await setup(f);
        f.clock.set('2027-04-11T00:00:00Z');
        await s.allocations.allocate('acme', s.subId, s.seats, { quantity: 5 });
        f.clock.set('2027-04-21T00:00:00Z');
        const down = await s.allocations.allocate('acme', s.subId, s.seats, { quantity: 2, memo: ' Fewer seats ' });
        // 45.00 → 18.00 with a third of the period left: 9.00 back.
        expect([down.direction, down.chargeInCents, down.creditInCents, down.payment]).toEqual([
          'downgrade',
          0,
          900,
          null,
        ]);
        expect(down.line?.memo).toBe('Fewer seats');
        expect(down.allocation.memo).toBe('Fewer seats');
        const up = await s.allocations.allocate('acme', s.subId, s.seats, { quantity: 6, upgradeCharge: 'full' });
        // 18.00 → 54.00 in full: 36.00, of which the 9.00 credit pays 9.00.
        expect(up.chargeInCents).toBe(3600);
        expect(up.payment?.amountInCents).toBe(2700);
        expect(await linesAfterSignup(f, s.subId)).toEqual([
          ['charge', 'quantity_based_component', 3000, 3000, s.seats],
          ['payment', 'component_proration', 3000, 0, s.seats],
          ['credit', 'quantity_based_component', -900, -900, s.seats],
          ['charge', 'quantity_based_component', 3600, 2700, s.seats],
          ['payment', 'component_proration', 2700, 0, s.seats],
        ]);
        expect(
          (await s.allocations.listAllocations('acme', s.subId, s.seats)).map((a) => [a.previousQuantity, a.quantity]),
        ).toEqual([
          [0, 5],
          [5, 2],
          [2, 6],
        ]);
        const changes = s.events.filter((e) => e.key === 'component_allocation_change');
        expect(changes.map((e) => [e.payload.previous_allocation, e.payload.new_allocation, e.payload.memo])).toEqual([
          [0, 5, null],
          [5, 2, 'Fewer seats'],
          [2, 6, null],
        ]);
      });

      it('accrues the charge to the balance without a payment when accrueCharge is true, in full or prorated', async () => {
        const f = fixture();
        const s = await setup(f);
        f.clock.set('2027-04-21T00:00:00Z');
        const full = await s.allocations.allocate('acme', s.subId, s.seats, {
          quantity: 2,
          upgradeCharge: 'full',
          accrueCharge: true,
        });
        const prorated = await s.allocations.allocate('acme', s.subId, s.seats, { quantity: 3, accrueCharge: true });
        expect([full.chargeInCents, full.payment, prorated.chargeInCents, prorated.payment]).toEqual([
          1800,
          null,
          300,
          null,
        ]);
        expect(await linesAfterSignup(f, s.subId)).toEqual([
          ['charge', 'quantity_based_component', 1800, 1800, s.seats],
          ['charge', 'quantity_based_component', 300, 2100, s.seats],
        ]);
        expect(f.gateway.chargeCalls).toBe(1);
        expect(keysOf(s.events)).toEqual(['component_allocation_change', 'component_allocation_change']);
        expect(full.allocation.accrueCharge).toBe(true);
      });

      it('records the change but no line when the mode is none, either way', async () => {
        const f = fixture();
        const s = await setup(f);
        f.clock.set('2027-04-11T00:00:00Z');
        const up = await s.allocations.allocate('acme', s.subId, s.seats, { quantity: 4, upgradeCharge: 'none' });
        const down = await s.allocations.allocate('acme', s.subId, s.seats, { quantity: 1, downgradeCredit: 'none' });
        expect([up.direction, up.chargeInCents, up.line, up.payment]).toEqual(['upgrade', 0, null, null]);
        expect([down.direction, down.creditInCents, down.line]).toEqual(['downgrade', 0, null]);
        expect(await linesAfterSignup(f, s.subId)).toEqual([]);
        expect((await s.allocations.listComponents('acme', s.subId))[0]?.subscriptionComponent.allocatedQuantity).toBe(
          1,
        );
        expect(keysOf(s.events)).toEqual(['component_allocation_change', 'component_allocation_change']);
      });

      it('maps the classic schemes, with the modern fields winning over them', async () => {
        const f = fixture();
        const s = await setup(f);
        f.clock.set('2027-04-11T00:00:00Z');
        const delayed = await s.allocations.allocate('acme', s.subId, s.seats, {
          quantity: 1,
          prorationUpgradeScheme: 'full-price-delay-capture',
        });
        expect([delayed.chargeInCents, delayed.payment, delayed.allocation.accrueCharge]).toEqual([900, null, true]);
        const captured = await s.allocations.allocate('acme', s.subId, s.seats, {
          quantity: 2,
          prorationUpgradeScheme: 'full-price-delay-capture',
          accrueCharge: false,
        });
        // The 9.00 accrued before is still owed; the capture takes this change's 9.00 only.
        expect([captured.chargeInCents, captured.payment?.amountInCents]).toEqual([900, 900]);
        const noCredit = await s.allocations.allocate('acme', s.subId, s.seats, {
          quantity: 0,
          prorationDowngradeScheme: 'no-prorate',
        });
        expect([noCredit.direction, noCredit.creditInCents]).toEqual(['downgrade', 0]);
        expect(await linesAfterSignup(f, s.subId)).toEqual([
          ['charge', 'quantity_based_component', 900, 900, s.seats],
          ['charge', 'quantity_based_component', 900, 1800, s.seats],
          ['payment', 'component_proration', 900, 900, s.seats],
        ]);
      });

      it('keeps the allocation and accrues the charge when the card is declined', async () => {
        const f = fixture();
        const s = await setup(f);
        f.clock.set('2027-04-11T00:00:00Z');
        f.gateway.injectFailure({ outcome: 'declined', keyPrefix: 'allocation:' });
        const result = await s.allocations.allocate('acme', s.subId, s.seats, { quantity: 5 });
        expect(result.payment).toMatchObject({
          status: 'declined',
          amountInCents: 3000,
          transaction: null,
          message: 'Bogus Gateway: Forced failure',
        });
        expect(result.subscriptionComponent.allocatedQuantity).toBe(5);
        expect(await linesAfterSignup(f, s.subId)).toEqual([
          ['charge', 'quantity_based_component', 3000, 3000, s.seats],
        ]);
        expect(keysOf(s.events)).toEqual(['component_allocation_change', 'payment_failure']);
        expect(s.events[1]!.payload).toEqual({
          subscription: { id: s.subId, state: 'active' },
          payment_attempt: {
            id: result.payment!.attemptId,
            amount_in_cents: 3000,
            memo: 'Seats: 0 to 5 seat (prorated)',
          },
          message: 'Bogus Gateway: Forced failure',
        });
        expect((await f.engine.site('acme').subscriptions.get(s.subId)).balanceInCents).toBe(3000);
        // The outcome step released the claim and cancelled the reconciliation: a gateway error
        // does the same, and the next change collects at once.
        const open = await f.storage.transaction((tx) =>
          tx.dueWork.pendingFor(s.siteId, result.payment!.attemptId, ['reconcile_payment']),
        );
        expect(open).toEqual([]);
        f.gateway.injectFailure({ outcome: 'error', keyPrefix: 'allocation:' });
        const failed = await s.allocations.allocate('acme', s.subId, s.ssl, { quantity: 1 });
        expect(failed.payment?.status).toBe('failed');
        const next = await s.allocations.allocate('acme', s.subId, s.seats, { quantity: 6 });
        expect([next.payment?.status, next.payment?.amountInCents]).toEqual(['succeeded', 600]);
      });

      it('keeps an unanswered payment open for reconciliation, and settles one the gateway did take', async () => {
        const f = fixture();
        const s = await setup(f);
        f.clock.set('2027-04-11T00:00:00Z');
        f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'allocation:', charged: false });
        const lost = await s.allocations.allocate('acme', s.subId, s.seats, { quantity: 5 });
        expect(lost.payment?.status).toBe('unknown');
        const open = await f.storage.transaction((tx) => tx.payments.listUnresolved(new Date('2100-01-01'), 10));
        expect(open.map((a) => [a.id, a.status, a.purpose])).toEqual([
          [lost.payment!.attemptId, 'unknown', 'allocation'],
        ]);
        // Its reconciliation row was committed with the attempt, and stays for the lost answer.
        const rows = await f.storage.transaction((tx) =>
          tx.dueWork.pendingFor(s.siteId, lost.payment!.attemptId, ['reconcile_payment']),
        );
        expect(rows.map((r) => [r.dueAt.toISOString(), r.payload.type, r.payload.componentId])).toEqual([
          ['2027-04-11T01:00:00.000Z', 'allocation', s.seats],
        ]);
        expect(keysOf(s.events)).toEqual(['component_allocation_change']);
        f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'allocation:' });
        const taken = await s.allocations.allocate('acme', s.subId, s.seats, { quantity: 6 });
        // The money moved although the answer was lost: the lookup by key finds it.
        expect(taken.payment?.status).toBe('succeeded');
        expect(await linesAfterSignup(f, s.subId)).toEqual([
          ['charge', 'quantity_based_component', 3000, 3000, s.seats],
          ['charge', 'quantity_based_component', 600, 3600, s.seats],
          ['payment', 'component_proration', 600, 3000, s.seats],
        ]);
      });

      it('accrues without an attempt when the subscription has no card', async () => {
        const f = fixture();
        const s = await setup(f);
        await s.acme.catalog.createProduct(s.familyId, {
          name: 'Invoiced',
          handle: 'invoiced',
          priceInCents: 3000,
          interval: 1,
          intervalUnit: 'month',
          requireCreditCard: false,
        });
        const cardless = await s.acme.subscriptions.create({
          productHandle: 'invoiced',
          customer: { firstName: 'B', lastName: 'C', email: 'b@example.com' },
          nextBillingAt: '2027-04-05T00:00:00Z',
        });
        f.clock.set('2027-04-03T00:00:00Z');
        const calls = f.gateway.chargeCalls;
        // Before an import's first billing nothing was paid for the period, so nothing is charged.
        const free = await s.allocations.allocate('acme', cardless.subscription.id, s.seats, { quantity: 3 });
        expect([free.direction, free.chargeInCents, free.payment]).toEqual(['upgrade', 0, null]);
        f.clock.set('2027-04-05T00:00:00Z');
        await f.engine.runDue();
        f.clock.set('2027-04-20T00:00:00Z');
        const renewed = await s.acme.subscriptions.get(cardless.subscription.id);
        // The renewal charges the product (30.00) and the 3 allocated seats in advance (3 x 9.00).
        expect([renewed.subscription.periodIndex, renewed.balanceInCents]).toEqual([0, 5700]);
        const later = await s.allocations.allocate('acme', cardless.subscription.id, s.seats, { quantity: 4 });
        // 3 → 4 seats (9.00) with 15 of 30 days of the first billed period left.
        expect([later.chargeInCents, later.payment]).toEqual([450, null]);
        const lines = await f.engine.site('acme').subscriptions.transactions(cardless.subscription.id);
        expect(lines.at(-1)).toMatchObject({
          type: 'charge',
          kind: 'quantity_based_component',
          amountInCents: 450,
          endingBalanceInCents: 6150,
        });
        expect(f.gateway.chargeCalls).toBe(calls);
      });

      it('charges nothing during a trial: the trial period was not paid for', async () => {
        const f = fixture();
        const s = await setup(f);
        const trial = await s.acme.subscriptions.create({
          productHandle: 'trial',
          customer: { firstName: 'T', lastName: 'R', email: 't@example.com' },
          creditCard: VISA,
        });
        expect(trial.subscription.state).toBe('trialing');
        f.clock.set('2027-04-05T00:00:00Z');
        const up = await s.allocations.allocate('acme', trial.subscription.id, s.seats, { quantity: 3 });
        expect([up.direction, up.chargeInCents, up.line, up.payment]).toEqual(['upgrade', 0, null, null]);
        const preview = await s.allocations.previewAllocation('acme', trial.subscription.id, s.seats, { quantity: 1 });
        expect(preview).toEqual({
          direction: 'downgrade',
          chargeInCents: 0,
          creditInCents: 0,
          discountInCents: 0,
          periodType: 'prorated',
        });
      });

      it('prices with the pinned version after a price change; a first allocation pins the current version', async () => {
        const f = fixture();
        const s = await setup(f);
        f.clock.set('2027-04-11T00:00:00Z');
        await s.allocations.allocate('acme', s.subId, s.seats, { quantity: 1, accrueCharge: true });
        await s.acme.components.update(s.seats, { unitPrice: '30' });
        await s.acme.components.update(s.ssl, { unitPrice: '45' });
        const more = await s.allocations.allocate('acme', s.subId, s.seats, { quantity: 2, accrueCharge: true });
        const on = await s.allocations.allocate('acme', s.subId, s.ssl, { quantity: 1, accrueCharge: true });
        // Seats stay at 9.00 (version 1): 9.00 × 2/3; SSL is new, at version 2: 45.00 × 2/3.
        expect([more.chargeInCents, more.subscriptionComponent.componentVersion]).toEqual([600, 1]);
        expect([on.chargeInCents, on.subscriptionComponent.componentVersion]).toEqual([3000, 2]);
        const listed = await s.allocations.listComponents('acme', s.subId);
        expect(
          listed.map((c) => [
            c.component.name,
            c.version.version,
            c.version.pricing.brackets[0]?.unitPrice,
            c.subscriptionComponent.allocatedQuantity,
          ]),
        ).toEqual([
          ['Seats', 1, '9', 2],
          ['SSL', 2, '45', 1],
        ]);
      });

      it('turns an on/off component on and off, and refuses 50 with the T14 error body', async () => {
        const f = fixture();
        const s = await setup(f);
        f.clock.set('2027-04-11T00:00:00Z');
        const on = await s.allocations.allocate('acme', s.subId, s.ssl, { quantity: 1 });
        f.clock.set('2027-04-21T00:00:00Z');
        const off = await s.allocations.allocate('acme', s.subId, s.ssl, { quantity: '0' });
        expect([on.chargeInCents, off.creditInCents]).toEqual([1000, 500]);
        expect(await linesAfterSignup(f, s.subId)).toEqual([
          ['charge', 'on_off_component', 1000, 1000, s.ssl],
          ['payment', 'component_proration', 1000, 0, s.ssl],
          ['credit', 'on_off_component', -500, -500, s.ssl],
        ]);
        expect(on.line?.memo).toBe('SSL: 0 to 1 (prorated)');
        const before = await trace(f, s);
        const error = await rejection(s.allocations.allocate('acme', s.subId, s.ssl, { quantity: 50 }));
        expect(error.code).toBe('validation');
        expect(error.httpStatus).toBe(422);
        expect(error.shape).toBe('objects');
        expect(error.details).toEqual([
          { message: T14, attribute: 'quantity', extra: { kind: 'allocation', component_id: s.ssl, on: 'quantity' } },
        ]);
        expect(await trace(f, s)).toEqual(before);
        const previewError = await rejection(s.allocations.previewAllocation('acme', s.subId, s.ssl, { quantity: 2 }));
        expect(previewError.details).toEqual(error.details);
      });

      it('applies several allocations in one command with one payment, or none of them', async () => {
        const f = fixture();
        const s = await setup(f);
        f.clock.set('2027-04-11T00:00:00Z');
        const before = await trace(f, s);
        const bad = await rejection(
          s.allocations.allocateMany('acme', s.subId, [
            { componentId: s.seats, quantity: 3 },
            { componentId: s.ssl, quantity: 2 },
          ]),
        );
        expect(bad.messages).toEqual([T14]);
        expect(await trace(f, s)).toEqual(before);
        const bulk = await s.allocations.allocateMany('acme', s.subId, [
          { componentId: s.seats, quantity: 3 },
          { componentId: s.ssl, quantity: 1 },
          { componentId: s.seats, quantity: 4, accrueCharge: true },
        ]);
        expect(
          bulk.allocations.map((a) => [a.allocation.componentId, a.allocation.previousQuantity, a.chargeInCents]),
        ).toEqual([
          [s.seats, 0, 1800],
          [s.ssl, 0, 1000],
          [s.seats, 3, 600],
        ]);
        // One payment for the charges to collect now (18.00 + 10.00); the accrued 6.00 stays owed.
        expect(bulk.payment).toMatchObject({ status: 'succeeded', amountInCents: 2800 });
        expect(bulk.payment?.transaction?.componentId).toBeNull();
        expect(
          [...f.gateway.charges.keys()].some((k) => k.startsWith(`allocation:${s.subId}:${s.seats}+${s.ssl}:`)),
        ).toBe(true);
        expect(await linesAfterSignup(f, s.subId)).toEqual([
          ['charge', 'quantity_based_component', 1800, 1800, s.seats],
          ['charge', 'on_off_component', 1000, 2800, s.ssl],
          ['charge', 'quantity_based_component', 600, 3400, s.seats],
          ['payment', 'component_proration', 2800, 600, null],
        ]);
        expect(keysOf(s.events)).toEqual([
          'component_allocation_change',
          'component_allocation_change',
          'component_allocation_change',
          'payment_success',
        ]);
      });

      it('previews exactly what allocating then does, and changes nothing', async () => {
        const f = fixture();
        const s = await setup(f);
        const steps = [
          { at: '2027-04-03T07:00:00Z', component: 'seats', input: { quantity: 7 } },
          { at: '2027-04-09T13:31:17Z', component: 'seats', input: { quantity: 2 } },
          { at: '2027-04-12T00:00:00Z', component: 'ssl', input: { quantity: 1, upgradeCharge: 'full' as const } },
          { at: '2027-04-29T23:59:59Z', component: 'seats', input: { quantity: 11, accrueCharge: true } },
          { at: '2027-04-30T01:00:00Z', component: 'ssl', input: { quantity: 0, downgradeCredit: 'none' as const } },
          { at: '2027-04-30T02:00:00Z', component: 'seats', input: { quantity: 11 } },
        ];
        for (const step of steps) {
          f.clock.set(step.at);
          const id = step.component === 'seats' ? s.seats : s.ssl;
          const before = await trace(f, s);
          const preview = await s.allocations.previewAllocation('acme', s.subId, id, step.input);
          expect(await trace(f, s)).toEqual(before);
          const done = await s.allocations.allocate('acme', s.subId, id, step.input);
          expect(preview).toEqual({
            direction: done.direction,
            chargeInCents: done.chargeInCents,
            creditInCents: done.creditInCents,
            discountInCents: 0,
            periodType: 'prorated',
          });
          expect([done.discountInCents, done.discountLines]).toEqual([0, []]);
          const lineAmount = done.line?.amountInCents ?? 0;
          expect(lineAmount).toBe(done.chargeInCents - done.creditInCents);
        }
        expect((await s.allocations.listAllocations('acme', s.subId)).length).toBe(steps.length);
      });

      it('rejects every bad input with the service messages and no trace', async () => {
        const f = fixture();
        const s = await setup(f);
        f.clock.set('2027-04-11T00:00:00Z');
        await s.allocations.allocate('acme', s.subId, s.seats, { quantity: 1, uniquenessToken: 'tok-1' });
        const before = await trace(f, s);
        const cases: [() => Promise<unknown>, string, string[]][] = [
          [
            () => s.allocations.allocate('acme', s.subId, s.seats, { quantity: -1 }),
            'validation',
            ['Quantity: must be a whole number greater than or equal to 0.'],
          ],
          [
            () => s.allocations.allocate('acme', s.subId, s.seats, { quantity: 1.5 }),
            'validation',
            ['Quantity: must be a whole number greater than or equal to 0.'],
          ],
          [
            () => s.allocations.allocate('acme', s.subId, s.seats, { quantity: 'ten' }),
            'validation',
            ['Quantity: is not a number.'],
          ],
          [
            () =>
              s.allocations.allocate('acme', s.subId, s.seats, {
                quantity: 2,
                upgradeCharge: 'half' as never,
                downgradeCredit: 'some' as never,
                accrueCharge: 'yes' as never,
              }),
            'validation',
            [
              'Upgrade charge: must be one of full, prorated or none.',
              'Downgrade credit: must be one of full, prorated or none.',
              'Accrue charge: must be true or false.',
            ],
          ],
          [
            () =>
              s.allocations.allocate('acme', s.subId, s.seats, {
                quantity: 2,
                prorationUpgradeScheme: 'prorate',
                prorationDowngradeScheme: 'full',
              }),
            'validation',
            [
              'Proration upgrade scheme: must be one of prorate-attempt-capture, prorate-delay-capture, full-price-attempt-capture, full-price-delay-capture, no-prorate.',
              'Proration downgrade scheme: must be one of prorate, no-prorate.',
            ],
          ],
          [
            () => s.allocations.allocate('acme', s.subId, s.seats, { quantity: 2, memo: 5 as never }),
            'validation',
            ['Memo: must be text.'],
          ],
          [
            () => s.allocations.allocate('acme', s.subId, s.data, { quantity: 2 }),
            'validation',
            ['Component: allocations are only for quantity-based and on/off components; record usage instead.'],
          ],
          [
            () => s.allocations.allocate('acme', s.subId, s.foreign, { quantity: 2 }),
            'not_found',
            [`Component ${s.foreign} not found.`],
          ],
          [
            () => s.allocations.allocate('acme', s.subId, 987_654, { quantity: 2 }),
            'not_found',
            ['Component 987654 not found.'],
          ],
          [
            () => s.allocations.allocate('acme', 987_654, s.seats, { quantity: 2 }),
            'not_found',
            ['Subscription 987654 not found.'],
          ],
          [
            () => s.allocations.allocate('acme', s.subId, s.seats, { quantity: 2, uniquenessToken: 'tok-1' }),
            'duplicate_submission',
            ['DuplicatePrevention::DuplicateSubmissionError'],
          ],
          [
            () => s.allocations.allocateMany('acme', s.subId, []),
            'validation',
            ['Allocations: at least one allocation is required.'],
          ],
          [
            () => s.allocations.recordUsage('acme', s.subId, s.data, { quantity: -3 }),
            'validation',
            ['Quantity: must be a whole number greater than or equal to 0.'],
          ],
          [
            () => s.allocations.recordUsage('acme', s.subId, s.data, { quantity: 0.25 }),
            'validation',
            ['Quantity: must be a whole number greater than or equal to 0.'],
          ],
          [
            () => s.allocations.recordUsage('acme', s.subId, s.seats, { quantity: 3 }),
            'validation',
            ['Component: usage can only be recorded for metered components.'],
          ],
          [
            () => s.allocations.recordUsage('acme', s.subId, s.foreign, { quantity: 3 }),
            'not_found',
            [`Component ${s.foreign} not found.`],
          ],
        ];
        for (const [run, code, messages] of cases) {
          const error: BillingError = await rejection(run());
          expect([error.code, error.messages]).toEqual([code, messages]);
          expect(await trace(f, s)).toEqual(before);
        }
        // Allocation input problems come in the allocation object shape, one object per problem.
        const shaped = await rejection(
          s.allocations.allocate('acme', s.subId, s.seats, { quantity: -1, upgradeCharge: 'x' as never }),
        );
        expect(shaped.shape).toBe('objects');
        expect(shaped.details.map((d) => d.extra)).toEqual([
          { kind: 'allocation', component_id: s.seats, on: 'quantity' },
          { kind: 'allocation', component_id: s.seats, on: 'upgrade_charge' },
        ]);
        expect(s.events.filter((e) => e.key === 'component_allocation_change')).toHaveLength(1);
      });

      it('refuses changes and usage on a canceled subscription, and an archived component it does not have', async () => {
        const f = fixture();
        const s = await setup(f);
        await s.acme.components.archive(s.ssl);
        const archived = await rejection(s.allocations.allocate('acme', s.subId, s.ssl, { quantity: 1 }));
        expect(archived.messages).toEqual([`Component: '${s.ssl}' has been archived.`]);
        await s.acme.subscriptions.cancel(s.subId);
        const before = await trace(f, s);
        for (const run of [
          () => s.allocations.allocate('acme', s.subId, s.seats, { quantity: 1 }),
          () => s.allocations.previewAllocation('acme', s.subId, s.seats, { quantity: 1 }),
          () => s.allocations.allocateMany('acme', s.subId, [{ componentId: s.seats, quantity: 1 }]),
          () => s.allocations.recordUsage('acme', s.subId, s.data, { quantity: 1 }),
        ]) {
          const error = await rejection(run());
          expect([error.code, error.messages]).toEqual([
            'validation',
            ['This subscription is not eligible for allocation changes.'],
          ]);
        }
        expect(await trace(f, s)).toEqual(before);
      });
    });

    describe('coupons, lost answers and concurrent changes', () => {
      /** A coupon of the Plans family and a new subscription to `basic` that uses the given codes. */
      async function couponed(s: Setup, email: string, codes: string[]) {
        const sub = await s.acme.subscriptions.create({
          productHandle: 'basic',
          customer: { firstName: 'C', lastName: 'P', email },
          creditCard: VISA,
          couponCodes: codes,
        });
        return sub.subscription.id;
      }

      /** type, kind, amount, ending balance and component of a subscription's lines from the `from`th. */
      async function linesFrom(f: EngineFixture, subId: number, from: number) {
        const all = await f.engine.site('acme').subscriptions.transactions(subId);
        return all.slice(from).map((l) => [l.type, l.kind, l.amountInCents, l.endingBalanceInCents, l.componentId]);
      }

      it('discounts an upgrade charge and its downgrade credit by a recurring percentage coupon, as a renewal does', async () => {
        const f = fixture();
        const s = await setup(f);
        await s.acme.coupons.create({
          name: 'Half',
          code: 'HALF',
          description: 'Half off',
          percentage: '50',
          recurring: true,
          productFamilyId: s.familyId,
        });
        const subId = await couponed(s, 'half@example.com', ['HALF']);
        const usesBefore = (await s.acme.subscriptions.get(subId)).subscription.data.couponUses;
        // Signup: 30.00 less 15.00, paid 15.00 (three lines).
        expect(await linesFrom(f, subId, 0)).toEqual([
          ['charge', 'baseline', 3000, 3000, null],
          ['adjustment', 'coupon', -1500, 1500, null],
          ['payment', null, 1500, 0, null],
        ]);
        f.clock.set('2027-04-11T00:00:00Z');
        const upPreview = await s.allocations.previewAllocation('acme', subId, s.seats, { quantity: 5 });
        const up = await s.allocations.allocate('acme', subId, s.seats, { quantity: 5 });
        // 5 seats for 20 of 30 days: 30.00, of which the coupon takes 15.00; 15.00 is collected.
        expect([up.chargeInCents, up.discountInCents, up.payment?.amountInCents]).toEqual([3000, 1500, 1500]);
        expect(upPreview).toEqual({
          direction: 'upgrade',
          chargeInCents: 3000,
          creditInCents: 0,
          discountInCents: 1500,
          periodType: 'prorated',
        });
        expect(up.discountLines.map((l) => [l.type, l.kind, l.amountInCents, l.memo, l.periodIndex])).toEqual([
          ['adjustment', 'coupon', -1500, 'Coupon: HALF - Half off', 0],
        ]);
        f.clock.set('2027-04-21T00:00:00Z');
        const downPreview = await s.allocations.previewAllocation('acme', subId, s.seats, { quantity: 2 });
        const down = await s.allocations.allocate('acme', subId, s.seats, { quantity: 2 });
        // 45.00 → 18.00 with 10 of 30 days left: 9.00 undiscounted, but only 4.50 was paid for it.
        expect([down.creditInCents, down.discountInCents, down.payment]).toEqual([900, 450, null]);
        expect(downPreview).toMatchObject({ direction: 'downgrade', creditInCents: 900, discountInCents: 450 });
        expect(await linesFrom(f, subId, 3)).toEqual([
          ['charge', 'quantity_based_component', 3000, 3000, s.seats],
          ['adjustment', 'coupon', -1500, 1500, s.seats],
          ['payment', 'component_proration', 1500, 0, s.seats],
          ['credit', 'quantity_based_component', -900, -900, s.seats],
          ['adjustment', 'coupon', 450, -450, s.seats],
        ]);
        // The HTTP preview shows the same discount and total as the lines the change then wrote.
        const view = await s.acme.subscriptions.get(subId);
        const wire = serializeAllocationPreview(
          view,
          [
            {
              input: { componentId: s.seats, quantity: 2 },
              preview: downPreview,
              component: (await s.acme.components.get(s.seats)).component,
              previousQuantity: 5,
            },
          ],
          { currency: 'USD', timeZone: 'UTC' },
        ).allocation_preview;
        expect([wire.subtotal_in_cents, wire.total_discount_in_cents, wire.total_in_cents]).toEqual([-900, -450, -450]);
        // Not a use of the coupon: the renewal still discounts by the same rate.
        expect((await s.acme.subscriptions.get(subId)).subscription.data.couponUses).toEqual(usesBefore);
        f.clock.set('2027-05-01T00:00:00Z');
        await f.engine.runDue();
        // 30.00 + 2 seats 18.00 = 48.00, half off: 24.00, less the 4.50 credit: 19.50 collected.
        expect(await linesFrom(f, subId, 8)).toEqual([
          ['charge', 'baseline', 3000, 2550, null],
          ['charge', 'quantity_based_component', 1800, 4350, s.seats],
          ['adjustment', 'coupon', -2400, 1950, null],
          ['payment', null, 1950, 0, null],
        ]);
      });

      it('leaves a flat-amount coupon out of mid-period changes, and applies a stacked percentage one alone', async () => {
        const f = fixture();
        const s = await setup(f);
        await s.acme.coupons.create({
          name: 'Ten',
          code: 'TEN',
          amountInCents: 1000,
          recurring: true,
          stackable: true,
          productFamilyId: s.familyId,
        });
        await s.acme.coupons.create({
          name: 'Fifth',
          code: 'FIFTH',
          percentage: '20',
          recurring: true,
          stackable: true,
          productFamilyId: s.familyId,
        });
        const flatOnly = await couponed(s, 'flat@example.com', ['TEN']);
        const both = await couponed(s, 'both@example.com', ['TEN', 'FIFTH']);
        f.clock.set('2027-04-11T00:00:00Z');
        const flat = await s.allocations.allocate('acme', flatOnly, s.ssl, { quantity: 1 });
        expect([flat.chargeInCents, flat.discountInCents, flat.discountLines, flat.payment?.amountInCents]).toEqual([
          1000,
          0,
          [],
          1000,
        ]);
        const stacked = await s.allocations.allocate('acme', both, s.ssl, { quantity: 1 });
        // 15.00 for 20 of 30 days: 10.00, 20% off: 2.00; the flat 10.00 would have taken it all.
        expect([stacked.chargeInCents, stacked.discountInCents, stacked.payment?.amountInCents]).toEqual([
          1000, 200, 800,
        ]);
        expect(stacked.discountLines.map((l) => [l.amountInCents, l.memo])).toEqual([[-200, 'Coupon: FIFTH']]);
        expect(await s.allocations.previewAllocation('acme', both, s.ssl, { quantity: 0 })).toMatchObject({
          creditInCents: 1000,
          discountInCents: 200,
        });
        // In bulk each change is discounted on its own, as its preview says: 3 seats cost 18.00 less
        // 3.60; SSL off credits 10.00 less 2.00. The payment takes what the balance owes: 6.40.
        const bulk = await s.allocations.allocateMany('acme', both, [
          { componentId: s.seats, quantity: 3 },
          { componentId: s.ssl, quantity: 0 },
        ]);
        expect(bulk.allocations.map((a) => [a.chargeInCents, a.creditInCents, a.discountInCents])).toEqual([
          [1800, 0, 360],
          [0, 1000, 200],
        ]);
        expect(bulk.payment).toMatchObject({ status: 'succeeded', amountInCents: 640 });
        expect((await s.acme.subscriptions.get(both)).balanceInCents).toBe(0);
      });

      it('settles a lost answer whose money was taken by its reconciliation, once, and the renewal never collects it again', async () => {
        const f = fixture();
        const s = await setup(f);
        const acme = f.engine.site('acme');
        f.clock.set('2027-04-11T00:00:00Z');
        f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'allocation:', charged: true });
        // Lookups fail too, so the command cannot learn the outcome.
        f.gateway.setFaults({ seed: 1, lookupFailureRate: 1, keyPrefixes: ['allocation:'] });
        const lost = await acme.allocations.allocate(s.subId, s.seats, { quantity: 5 });
        expect(lost.payment?.status).toBe('unknown');
        const key = [...f.gateway.charges.keys()].find((k) => k.startsWith(`allocation:${s.subId}:${s.seats}:`))!;
        expect(f.gateway.charges.get(key)?.amountInCents).toBe(3000);
        // The claim was released with the unknown outcome: the next change collects at once.
        const ssl = await acme.allocations.allocate(s.subId, s.ssl, { quantity: 1 });
        expect([ssl.payment?.status, ssl.payment?.amountInCents]).toEqual(['succeeded', 1000]);
        // The gateway still cannot be asked when the row falls due: the attempt stays open.
        f.clock.set('2027-04-11T02:00:00Z');
        await f.engine.runDue();
        const attemptOf = () => f.storage.transaction((tx) => tx.payments.findByKey(s.siteId, key));
        expect((await attemptOf())?.status).toBe('unknown');
        f.gateway.setFaults(undefined);
        f.clock.set('2027-04-12T00:00:00Z');
        await f.engine.runDue();
        expect((await attemptOf())?.status).toBe('succeeded');
        f.clock.set('2027-05-02T00:00:00Z');
        await f.engine.runDue();
        await f.engine.runDue();
        // Renewal: 30.00 + 5 seats 45.00 + SSL 15.00 = 90.00, nothing owed from before.
        expect(await linesAfterSignup(f, s.subId)).toEqual([
          ['charge', 'quantity_based_component', 3000, 3000, s.seats],
          ['charge', 'on_off_component', 1000, 4000, s.ssl],
          ['payment', 'component_proration', 1000, 3000, s.ssl],
          ['payment', 'component_proration', 3000, 0, s.seats],
          ['charge', 'baseline', 3000, 3000, null],
          ['charge', 'quantity_based_component', 4500, 7500, s.seats],
          ['charge', 'on_off_component', 1500, 9000, s.ssl],
          ['payment', null, 9000, 0, null],
        ]);
        const taken = [...f.gateway.charges.values()].map((c) => c.amountInCents);
        expect(taken.sort((a, b) => a - b)).toEqual([1000, 3000, 3000, 9000]);
        expect(taken.reduce((a, b) => a + b, 0)).toBe(16_000);
        const rows = await f.storage.transaction((tx) =>
          tx.dueWork.pendingFor(s.siteId, lost.payment!.attemptId, ['reconcile_payment']),
        );
        expect(rows).toEqual([]);
        const events = await f.storage.transaction((tx) => tx.outbox.listAfter(s.siteId, 0, 10_000));
        // One payment_success per payment line: the signup, SSL, the reconciled seats and the renewal.
        const payments = (await acme.subscriptions.transactions(s.subId)).filter((l) => l.type === 'payment');
        expect(
          events
            .filter((e) => e.key === 'payment_success' && e.subjectId === s.subId)
            .map((e) => (e.payload.transaction as { id: number }).id),
        ).toEqual(payments.map((l) => l.id));
      });

      it('marks a lost answer the gateway never took failed, leaving the charge for the renewal to collect once', async () => {
        const f = fixture();
        const s = await setup(f);
        const acme = f.engine.site('acme');
        f.clock.set('2027-04-11T00:00:00Z');
        f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'allocation:', charged: false });
        f.gateway.setFaults({ seed: 1, lookupFailureRate: 1, keyPrefixes: ['allocation:'] });
        const lost = await acme.allocations.allocate(s.subId, s.seats, { quantity: 5 });
        expect(lost.payment?.status).toBe('unknown');
        const ssl = await acme.allocations.allocate(s.subId, s.ssl, { quantity: 1 });
        expect([ssl.payment?.status, ssl.payment?.amountInCents]).toEqual(['succeeded', 1000]);
        f.gateway.setFaults(undefined);
        f.clock.set('2027-04-12T00:00:00Z');
        const summary = await f.engine.runDue();
        expect(summary.failed).toBe(1);
        // The attempt is no longer open, its row is done, and its failure was recorded once.
        const open = await f.storage.transaction(async (tx) => ({
          attempts: await tx.payments.listUnresolved(new Date('2100-01-01'), 10),
          rows: await tx.dueWork.pendingFor(s.siteId, lost.payment!.attemptId, ['reconcile_payment']),
        }));
        expect(open).toEqual({ attempts: [], rows: [] });
        expect((await acme.subscriptions.get(s.subId)).balanceInCents).toBe(3000);
        const events = await f.storage.transaction((tx) => tx.outbox.listAfter(s.siteId, 0, 10_000));
        expect(
          events
            .filter((e) => e.key === 'payment_failure')
            .map((e) => [(e.payload.payment_attempt as { id: number }).id, e.payload.message]),
        ).toEqual([[lost.payment!.attemptId, 'The gateway has no record of the charge.']]);
        f.clock.set('2027-05-02T00:00:00Z');
        await f.engine.runDue();
        await f.engine.runDue();
        // Renewal: 90.00 for the new period plus the 30.00 still owed for the seats.
        expect(await linesAfterSignup(f, s.subId)).toEqual([
          ['charge', 'quantity_based_component', 3000, 3000, s.seats],
          ['charge', 'on_off_component', 1000, 4000, s.ssl],
          ['payment', 'component_proration', 1000, 3000, s.ssl],
          ['charge', 'baseline', 3000, 6000, null],
          ['charge', 'quantity_based_component', 4500, 10_500, s.seats],
          ['charge', 'on_off_component', 1500, 12_000, s.ssl],
          ['payment', null, 12_000, 0, null],
        ]);
        expect([...f.gateway.charges.keys()].some((k) => k.startsWith(`allocation:${s.subId}:${s.seats}:`))).toBe(
          false,
        );
        const taken = [...f.gateway.charges.values()].map((c) => c.amountInCents);
        expect(taken.sort((a, b) => a - b)).toEqual([1000, 3000, 12_000]);
        expect(taken.reduce((a, b) => a + b, 0)).toBe(16_000);
      });

      it('lets one of eight concurrent upgrades charge while its payment is in flight; the others change nothing', async () => {
        const f = fixture();
        const s = await setup(f);
        const slow = slowGateway(f.gateway);
        const allocations = new AllocationService({ ...s.deps, gateway: slow.gateway });
        const snapshot = () =>
          f.storage.transaction(async (tx) => ({
            lines: await tx.ledger.listForSubscription(s.siteId, s.subId),
            allocations: await tx.subscriptionComponents.listAllocations(s.siteId, s.subId),
            outbox: await tx.outbox.listAfter(s.siteId, 0, 10_000),
          }));
        const windows = [
          { at: '2027-04-11T00:00:00Z', quantities: [1, 2, 3, 4, 5, 6, 7, 8] },
          { at: '2027-04-21T00:00:00Z', quantities: [11, 12, 13, 14, 15, 16, 17, 18] },
        ];
        const winners: number[] = [];
        for (const window of windows) {
          f.clock.set(window.at);
          const before = await snapshot();
          const callsBefore = slow.entered;
          const gate = slow.hold();
          let settled = 0;
          const refused: BillingError[] = [];
          const runs = window.quantities.map((quantity) =>
            allocations.allocate('acme', s.subId, s.seats, { quantity }).then(
              (result) => ({ quantity, result }),
              (error: unknown) => {
                settled += 1;
                slow.bump();
                refused.push(error as BillingError);
                return undefined;
              },
            ),
          );
          // Every request has either reached the gateway (and waits there) or been refused.
          await slow.until(() => slow.entered - callsBefore + settled >= window.quantities.length);
          expect(slow.entered - callsBefore).toBe(1);
          expect(refused.map((e) => [e.code, e.httpStatus])).toEqual(Array(7).fill(['conflict', 409]));
          // While the one payment is in flight, the refused changes left no trace.
          const during = await snapshot();
          expect(during.allocations.slice(0, before.allocations.length)).toEqual(before.allocations);
          expect(during.allocations.length).toBe(before.allocations.length + 1);
          expect(during.lines.slice(0, before.lines.length)).toEqual(before.lines);
          expect(during.lines.slice(before.lines.length).map((l) => l.type)).toEqual(['charge']);
          expect(during.outbox.slice(before.outbox.length).map((e) => e.key)).toEqual([
            'invoice_issued',
            'component_allocation_change',
          ]);
          gate();
          const done = (await Promise.all(runs)).filter((r) => r !== undefined);
          expect(done).toHaveLength(1);
          expect(done[0]!.result.payment?.status).toBe('succeeded');
          expect(done[0]!.result.allocation.quantity).toBe(done[0]!.quantity);
          winners.push(done[0]!.quantity);
        }
        expect(slow.maxInFlight).toBe(1);
        const [first, second] = winners as [number, number];
        // First window: 20 of 30 days at 9.00 a seat (6.00 a seat); second: 10 of 30 days (3.00 a seat).
        const charges = [first * 600, (second - first) * 300];
        expect(await linesAfterSignup(f, s.subId)).toEqual([
          ['charge', 'quantity_based_component', charges[0], charges[0], s.seats],
          ['payment', 'component_proration', charges[0], 0, s.seats],
          ['charge', 'quantity_based_component', charges[1], charges[1], s.seats],
          ['payment', 'component_proration', charges[1], 0, s.seats],
        ]);
        const [row] = await s.allocations.listComponents('acme', s.subId);
        expect(row?.subscriptionComponent.allocatedQuantity).toBe(second);
        const collected = [...f.gateway.charges.entries()].filter(([k]) => k.startsWith('allocation:'));
        expect(collected.map(([, c]) => c.amountInCents)).toEqual(charges);
        expect(f.gateway.chargeCalls).toBe(3);
      });
    });

    describe('metered usage', () => {
      it('adds usage to the balance, keeps each usage, and records metered_usage with the balances', async () => {
        const f = fixture();
        const s = await setup(f);
        f.clock.set('2027-04-11T08:30:00.250Z');
        const first = await s.allocations.recordUsage('acme', s.subId, s.data, { quantity: 10, memo: 'Backups' });
        f.clock.set('2027-04-12T00:00:00Z');
        const second = await s.allocations.recordUsage('acme', s.subId, s.data, { quantity: '5' });
        expect([
          first.previousUnitBalance,
          first.newUnitBalance,
          second.previousUnitBalance,
          second.newUnitBalance,
        ]).toEqual([0, 10, 10, 15]);
        expect((await s.allocations.listUsages('acme', s.subId, s.data)).map((u) => [u.quantity, u.memo])).toEqual([
          [10, 'Backups'],
          [5, null],
        ]);
        expect(keysOf(s.events)).toEqual(['metered_usage', 'metered_usage']);
        expect(s.events[0]!.payload).toEqual({
          component: { id: s.data, name: 'Data', unit_name: 'GB', kind: 'metered_component' },
          subscription: { id: s.subId, name: 'Basic', state: 'active' },
          product: { id: s.productId, handle: 'basic', name: 'Basic' },
          previous_unit_balance: 0,
          new_unit_balance: 10,
          usage_quantity: 10,
          memo: 'Backups',
          timestamp: '2027-04-11T08:30:00Z',
        });
        // Usage is billed in arrears: nothing is charged when it is recorded.
        expect(await linesAfterSignup(f, s.subId)).toEqual([]);
        const [row] = await s.allocations.listComponents('acme', s.subId);
        expect([
          row?.component.id,
          row?.subscriptionComponent.unitBalance,
          row?.subscriptionComponent.allocatedQuantity,
        ]).toEqual([s.data, 15, 0]);
      });

      it('counts concurrent usages without losing one', async () => {
        const f = fixture();
        const s = await setup(f);
        await s.allocations.recordUsage('acme', s.subId, s.data, { quantity: 1 });
        const results = await Promise.all(
          Array.from({ length: 10 }, () => s.allocations.recordUsage('acme', s.subId, s.data, { quantity: 2 })),
        );
        expect(results.map((r) => r.previousUnitBalance).sort((a, b) => a - b)).toEqual(
          Array.from({ length: 10 }, (_, i) => 1 + 2 * i),
        );
        const [row] = await s.allocations.listComponents('acme', s.subId);
        expect(row?.subscriptionComponent.unitBalance).toBe(21);
      });
    });

    describe('signup and renewal functions', () => {
      it('plans signup components: checks them, pins current versions and charges the first period in advance', async () => {
        const f = fixture();
        const s = await setup(f);
        await s.acme.components.update(s.seats, { unitPrice: '10' });
        const site = await s.acme.info();
        const period = {
          start: new Date('2027-04-01T00:00:00Z'),
          end: new Date('2027-05-01T00:00:00Z'),
          now: new Date('2027-04-01T00:00:00Z'),
          chargeNow: true,
        };
        const inputs = [
          { componentId: s.seats, allocatedQuantity: 3 },
          { handle: 'ssl', quantity: '1' },
          { componentId: s.data, unitBalance: 7 },
        ];
        const plan = await f.storage.transaction((tx) => planSignupComponents(tx, site, s.familyId, inputs, period));
        expect(plan.rows.map((r) => [r.component.id, r.componentVersion, r.allocatedQuantity, r.unitBalance])).toEqual([
          [s.seats, 2, 3, 0],
          [s.ssl, 1, 1, 0],
          [s.data, 1, 0, 7],
        ]);
        expect(plan.lines).toEqual([
          {
            kind: 'quantity_based_component',
            componentId: s.seats,
            amountInCents: 3000,
            memo: 'Seats: 3 seat (2027-04-01 - 2027-05-01)',
          },
          { kind: 'on_off_component', componentId: s.ssl, amountInCents: 1500, memo: 'SSL (2027-04-01 - 2027-05-01)' },
        ]);
        const trial = await f.storage.transaction((tx) =>
          planSignupComponents(tx, site, s.familyId, inputs, { ...period, chargeNow: false }),
        );
        expect([trial.rows.length, trial.lines]).toEqual([3, []]);
        // A short first period (calendar billing) is charged the part left of the full period.
        const short = await f.storage.transaction((tx) =>
          planSignupComponents(tx, site, s.familyId, [{ componentId: s.seats, unitBalance: '2' }], {
            start: new Date('2027-04-11T00:00:00Z'),
            now: new Date('2027-04-11T00:00:00Z'),
            end: new Date('2027-05-01T00:00:00Z'),
            prorationPeriodStart: new Date('2027-04-01T00:00:00Z'),
            chargeNow: true,
          }),
        );
        expect(short.lines.map((l) => [l.amountInCents, l.memo])).toEqual([
          [1333, 'Seats: 2 seat (2027-04-11 - 2027-05-01, prorated)'],
        ]);
      });

      it('refuses bad signup components with every message, and on/off quantities in the allocation shape', async () => {
        const f = fixture();
        const s = await setup(f);
        await s.acme.components.archive(s.data);
        const site = await s.acme.info();
        const period = { start: new Date(), end: new Date(Date.now() + 86_400_000), now: new Date(), chargeNow: true };
        const plan = (inputs: Parameters<typeof planSignupComponents>[3]) =>
          f.storage.transaction((tx) => planSignupComponents(tx, site, s.familyId, inputs, period));
        const listed = await rejection(
          plan([
            {},
            { componentId: 987_654, allocatedQuantity: 1 },
            { componentId: s.foreign, allocatedQuantity: 1 },
            { handle: 'data', unitBalance: 1 },
            { componentId: s.seats, allocatedQuantity: -2 },
            { handle: 'nope' },
            { componentId: s.ssl, quantity: 'x' },
          ]),
        );
        expect(listed.shape).toBe('list');
        expect(listed.messages).toEqual([
          'Component: cannot be blank.',
          "Component: '987654' does not exist.",
          `Component: '${s.foreign}' does not exist.`,
          "Component: 'data' has been archived.",
          'Allocated quantity: must be a whole number greater than or equal to 0.',
          "Component: 'nope' does not exist.",
          'Quantity: is not a number.',
        ]);
        const twice = await rejection(plan([{ componentId: s.seats }, { handle: 'seats' }]));
        expect(twice.messages).toEqual(["Component: 'seats' is given more than once."]);
        const onOff = await rejection(plan([{ componentId: s.ssl, allocatedQuantity: 2 }]));
        expect(onOff.shape).toBe('objects');
        expect(onOff.details).toEqual([
          { message: T14, attribute: 'quantity', extra: { kind: 'allocation', component_id: s.ssl, on: 'quantity' } },
        ]);
        await s.acme.components.update(s.seats, {
          pricingScheme: 'volume',
          prices: [{ startingQuantity: 1, endingQuantity: 10, unitPrice: '1' }],
        });
        const beyond = await rejection(plan([{ componentId: s.seats, allocatedQuantity: 11 }]));
        expect(beyond.messages).toEqual(["Quantity: must be at most 10 for this component's price brackets."]);
      });

      it('writes the planned rows pinned, without events', async () => {
        const f = fixture();
        const s = await setup(f);
        f.clock.set('2027-04-02T00:00:00Z');
        const site = await s.acme.info();
        const outboxBefore = await f.storage.transaction((tx) => tx.outbox.listAfter(s.siteId, 0, 10_000));
        const written = await runCommand(s.deps, async (ctx) => {
          const subscription = (await ctx.tx.subscriptions.findById(s.siteId, s.subId))!;
          const plan = await planSignupComponents(
            ctx.tx,
            site,
            s.familyId,
            [
              { componentId: s.seats, allocatedQuantity: 4 },
              { componentId: s.data, unitBalance: 3 },
            ],
            { start: ctx.now, end: ctx.now, now: ctx.now, chargeNow: false },
          );
          return writeSignupComponents(ctx, subscription, plan.rows);
        });
        expect(
          written.map((r) => [
            r.componentId,
            r.componentVersion,
            r.allocatedQuantity,
            r.unitBalance,
            r.createdAt.toISOString(),
          ]),
        ).toEqual([
          [s.seats, 1, 4, 0, '2027-04-02T00:00:00.000Z'],
          [s.data, 1, 0, 3, '2027-04-02T00:00:00.000Z'],
        ]);
        expect(
          await f.storage.transaction((tx) => tx.subscriptionComponents.listForSubscription(s.siteId, s.subId)),
        ).toEqual(written);
        expect(await f.storage.transaction((tx) => tx.outbox.listAfter(s.siteId, 0, 10_000))).toEqual(outboxBefore);
        expect(s.events).toEqual([]);
        expect(await s.allocations.listAllocations('acme', s.subId)).toEqual([]);
      });

      it('gives renewal lines in advance for allocations and in arrears for usage, and resets metered balances', async () => {
        const f = fixture();
        const s = await setup(f);
        f.clock.set('2027-05-01T00:00:00Z');
        // A subscription built with the repositories, its components pinned to version 1.
        const subscription = await f.storage.transaction(async (tx) => {
          const customer = await tx.customers.insert(customerFixture(s.siteId, { email: 'r@example.com' }));
          const product = (await tx.catalog.findProduct(s.siteId, s.productId))!;
          const sub = await tx.subscriptions.insert(subscriptionFixture(customer, product));
          const rows = [
            [s.seats, 5, 0],
            [s.ssl, 0, 0],
            [s.data, 0, 12],
          ] as const;
          for (const [componentId, allocatedQuantity, unitBalance] of rows) {
            await tx.subscriptionComponents.upsert({
              siteId: s.siteId,
              subscriptionId: sub.id,
              componentId,
              componentVersion: 1,
              allocatedQuantity,
              unitBalance,
              createdAt: new Date('2027-04-01T00:00:00Z'),
              updatedAt: new Date('2027-04-01T00:00:00Z'),
            });
          }
          return sub;
        });
        // A later price applies to new subscriptions only.
        await s.acme.components.update(s.seats, { unitPrice: '100' });
        const newPeriod = { index: 2, start: new Date('2027-05-01T00:00:00Z'), end: new Date('2027-06-01T00:00:00Z') };
        const lines = await runCommand(s.deps, (ctx) => renewalComponentLines(ctx, subscription, newPeriod));
        expect(lines).toEqual([
          {
            kind: 'quantity_based_component',
            componentId: s.seats,
            amountInCents: 4500,
            memo: 'Seats: 5 seat (2027-05-01 - 2027-06-01)',
          },
          {
            kind: 'metered_component',
            componentId: s.data,
            amountInCents: 600,
            memo: 'Data: 12 GB (usage to 2027-05-01)',
          },
        ]);
        const rows = await f.storage.transaction((tx) =>
          tx.subscriptionComponents.listForSubscription(s.siteId, subscription.id),
        );
        expect(rows.map((r) => [r.componentId, r.allocatedQuantity, r.unitBalance])).toEqual([
          [s.seats, 5, 0],
          [s.ssl, 0, 0],
          [s.data, 0, 0],
        ]);
        expect(s.events).toEqual([]);
        // The next renewal bills the allocation again but no usage: the balance was reset.
        const next = await runCommand(s.deps, (ctx) =>
          renewalComponentLines(ctx, subscription, {
            index: 3,
            start: newPeriod.end,
            end: new Date('2027-07-01T00:00:00Z'),
          }),
        );
        expect(next.map((l) => [l.componentId, l.amountInCents])).toEqual([[s.seats, 4500]]);
      });
    });
  });
}
