import {
  type ChargeRequest,
  type ChargeResult,
  createBillingEngine,
  type PaymentGateway,
  type TestGateway,
} from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

/**
 * What a delayed signup not started yet (`awaiting_signup`) shows and how its start moves: the
 * renewal preview and the subscription's proforma invoice show what the start will bill (the
 * start written as the due work writes it), an expiry derived from the product's expiration
 * interval moves with a moved start (one the caller gave does not), and a billing-date change is
 * refused while the start's first payment is in flight.
 */

const START = '2026-03-02T10:00:00Z';
const DELAYED_TO = '2026-03-05T00:00:00Z';
const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const ADA = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };

const at = (iso: string) => new Date(iso);

/**
 * `acme` (UTC): `basic` (10.00 a month, 5.00 setup fee), `trial` (20.00 a month after a 14-day
 * trial at 1.00), `expiring` (10.00 a month, expires 6 months after it starts), a metered Data
 * component (0.50 a GB) and a recurring 10% coupon TENOFF.
 */
async function setup(f: EngineFixture) {
  const { site: record } = await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const site = f.engine.site('acme');
  const family = await site.catalog.createFamily({ name: 'Plans' });
  await site.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
    initialChargeInCents: 500,
  });
  await site.catalog.createProduct(family.id, {
    name: 'Trial',
    handle: 'trial',
    priceInCents: 2000,
    interval: 1,
    intervalUnit: 'month',
    trialInterval: 14,
    trialIntervalUnit: 'day',
    trialPriceInCents: 100,
  });
  await site.catalog.createProduct(family.id, {
    name: 'Expiring',
    handle: 'expiring',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
    expirationInterval: 6,
    expirationIntervalUnit: 'month',
  });
  const data = await site.components.create(family.id, {
    name: 'Data',
    kind: 'metered',
    unitName: 'GB',
    handle: 'data',
    unitPrice: '0.5',
  });
  await site.coupons.create({
    name: 'Ten off',
    code: 'TENOFF',
    percentage: '10',
    recurring: true,
    productFamilyId: family.id,
  });
  /** Ledger lines, customers, subscriptions and invoices of the site: what a preview must never change. */
  const billingState = async () => {
    const counts = await f.storage.transaction((tx) => tx.siteData.counts(record.id));
    const invoices = await site.invoices.list({ perPage: 200 });
    return { ...counts, invoices: invoices.total };
  };
  return { site, data: data.component.id, billingState };
}

type Setup = Awaited<ReturnType<typeof setup>>;

function delayed(s: Setup, extra: Record<string, unknown> = {}) {
  return s.site.subscriptions.create({
    productHandle: 'basic',
    customer: ADA,
    creditCard: VISA,
    initialBillingAt: DELAYED_TO,
    ...extra,
  });
}

/** The billed lines (not payments) of a subscription: kind and amount. */
async function billed(s: Setup, id: number) {
  return (await s.site.subscriptions.transactions(id))
    .filter((t) => t.type !== 'payment')
    .map((t) => [t.kind ?? t.type, t.amountInCents]);
}

/**
 * A gateway whose delayed-signup charges wait until released (everything else answers at once):
 * the start's committed attempt stays in flight, observably, for as long as the test needs.
 */
function heldStartGateway(inner: TestGateway) {
  const waiting: (() => void)[] = [];
  let reached: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const gateway: PaymentGateway = {
    name: inner.name,
    supportsRefunds: inner.supportsRefunds,
    tokenize: (card) => inner.tokenize(card),
    refund: (request) => inner.refund(request),
    lookup: (key) => inner.lookup(key),
    async charge(request: ChargeRequest): Promise<ChargeResult> {
      if (!request.idempotencyKey.startsWith('delayed_signup:')) return inner.charge(request);
      await new Promise<void>((release) => {
        waiting.push(release);
        reached();
      });
      return inner.charge(request);
    },
  };
  return {
    gateway,
    /** Resolves once a start's charge is held. */
    held,
    releaseAll() {
      for (const release of waiting.splice(0)) release();
    },
  };
}

export function awaitingSignupStartSuite(harness: StorageHarness): void {
  describe(`awaiting_signup: previews of the start, its moved expiry, billing-date changes in flight (${harness.name})`, () => {
    const fixture = useEngine(harness, START);

    describe('renewal preview', () => {
      it('shows what the start will bill at initial_billing_at, and the start bills exactly that', async () => {
        const f = fixture();
        const s = await setup(f);
        const { subscription } = await delayed(s, { couponCode: 'TENOFF' });
        const before = await s.billingState();
        const preview = await s.site.subscriptions.previewRenewal(subscription.id);
        expect(preview.nextAssessmentAt).toEqual(at(DELAYED_TO));
        expect([preview.manifest.periodType, preview.manifest.startDate, preview.manifest.endDate]).toEqual([
          'recurring',
          at(DELAYED_TO),
          at('2026-04-05T00:00:00Z'),
        ]);
        // 10.00 and the 5.00 setup fee, less 10%.
        expect(preview.manifest.lineItems.map((l) => [l.kind, l.amountInCents, l.discountAmountInCents])).toEqual([
          ['baseline', 1000, 100],
          ['initial', 500, 50],
        ]);
        expect([
          preview.manifest.subtotalInCents,
          preview.manifest.totalDiscountInCents,
          preview.manifest.totalInCents,
          preview.existingBalanceInCents,
          preview.totalAmountDueInCents,
        ]).toEqual([1500, 150, 1350, 0, 1350]);
        expect(await s.billingState()).toEqual(before);
        expect(f.gateway.chargeCalls).toBe(0);

        f.clock.set(DELAYED_TO);
        await f.engine.runDue();
        expect(await billed(s, subscription.id)).toEqual([
          ['baseline', 1000],
          ['initial', 500],
          ['coupon', -150],
        ]);
        const [invoice] = (await s.site.invoices.list({ subscriptionId: subscription.id })).invoices;
        expect([invoice?.role, invoice?.totalInCents]).toEqual(['signup', preview.manifest.totalInCents]);
      });

      it('of a trial product shows the trial the start begins, at its moved start', async () => {
        const f = fixture();
        const s = await setup(f);
        const { subscription } = await delayed(s, { productHandle: 'trial' });
        await s.site.subscriptions.changeBillingDate(subscription.id, '2026-03-08T00:00:00Z');
        const preview = await s.site.subscriptions.previewRenewal(subscription.id);
        expect([
          preview.nextAssessmentAt,
          preview.manifest.periodType,
          preview.manifest.startDate,
          preview.manifest.endDate,
          preview.manifest.lineItems.map((l) => [l.kind, l.amountInCents]),
          preview.totalAmountDueInCents,
        ]).toEqual([
          at('2026-03-08T00:00:00Z'),
          'trial',
          at('2026-03-08T00:00:00Z'),
          at('2026-03-22T00:00:00Z'),
          [['trial', 100]],
          100,
        ]);
      });

      it('still refuses a canceled delayed signup (422)', async () => {
        const f = fixture();
        const s = await setup(f);
        const { subscription } = await delayed(s);
        await s.site.subscriptions.cancel(subscription.id);
        const error = await rejection(s.site.subscriptions.previewRenewal(subscription.id));
        expect([error.httpStatus, error.message]).toEqual([
          422,
          'A subscription that is cancelled has no renewal to preview.',
        ]);
      });
    });

    describe('proforma invoice', () => {
      it('previews and keeps the invoice the start will issue, as the signup proforma shows it, billing nothing', async () => {
        const f = fixture();
        const s = await setup(f);
        const input = {
          productHandle: 'basic',
          customer: ADA,
          creditCard: VISA,
          couponCode: 'TENOFF',
          initialBillingAt: DELAYED_TO,
        };
        const signupProforma = await s.site.proformaInvoices.previewSignup(input);
        const { subscription } = await s.site.subscriptions.create(input);
        const before = await s.billingState();

        const preview = await s.site.proformaInvoices.preview(subscription.id);
        expect({
          subscriptionId: preview.subscriptionId,
          customerId: preview.customerId,
          deliveryDate: preview.deliveryDate,
          lines: preview.lineItems.map((l) => [l.kind, l.subtotalInCents]),
          totals: [preview.subtotalInCents, preview.discountInCents, preview.totalInCents, preview.dueInCents],
        }).toEqual({
          subscriptionId: subscription.id,
          customerId: subscription.customerId,
          deliveryDate: '2026-03-05',
          lines: [
            ['baseline', 1000],
            ['initial', 500],
          ],
          totals: [1500, 150, 1350, 1350],
        });
        // The same invoice the signup proforma of that signup showed, bound to the subscription.
        const unbound = (c: typeof preview) => ({
          deliveryDate: c.deliveryDate,
          lineItems: c.lineItems,
          discounts: c.discounts,
          totalInCents: c.totalInCents,
          productName: c.productName,
        });
        expect(unbound(preview)).toEqual(unbound(signupProforma.current));
        expect(await s.billingState()).toEqual(before);

        const kept = await s.site.proformaInvoices.create(subscription.id);
        const { id: _id, uid: _uid, number, status, voidedAt: _v, voidReason: _r, ...content } = kept;
        expect([number, status]).toEqual([1, 'draft']);
        expect(content).toEqual(preview);
        expect(await s.billingState()).toEqual(before);
        expect((await s.site.subscriptions.get(subscription.id)).subscription.state).toBe('awaiting_signup');
        expect(f.gateway.chargeCalls).toBe(0);

        // The start then issues exactly that invoice.
        f.clock.set(DELAYED_TO);
        await f.engine.runDue();
        const [invoice] = (await s.site.invoices.list({ subscriptionId: subscription.id })).invoices;
        expect(invoice?.lineItems.map((l) => [l.kind, l.subtotalInCents, l.discountInCents, l.totalInCents])).toEqual(
          kept.lineItems.map((l) => [l.kind, l.subtotalInCents, l.discountInCents, l.totalInCents]),
        );
        expect(invoice?.totalInCents).toBe(kept.totalInCents);
      });

      it('while the start is in flight, shows the start already planned (metered usage taken off the balances)', async () => {
        const f = fixture();
        const s = await setup(f);
        const { subscription } = await delayed(s);
        await s.site.allocations.recordUsage(subscription.id, s.data, { quantity: 4 });
        const awaiting = await s.site.proformaInvoices.preview(subscription.id);
        // 10.00, 4 GB at 0.50 and the 5.00 setup fee.
        expect(awaiting.lineItems.map((l) => [l.kind, l.subtotalInCents])).toEqual([
          ['baseline', 1000],
          ['metered_component', 200],
          ['initial', 500],
        ]);

        const held = heldStartGateway(f.gateway);
        const worker = createBillingEngine({ storage: f.storage, clock: f.clock, gateway: held.gateway });
        f.clock.set(DELAYED_TO);
        const running = worker.runDue();
        await held.held;
        const inFlight = await s.site.subscriptions.get(subscription.id);
        expect([inFlight.subscription.state, inFlight.subscription.data.pendingStart != null]).toEqual([
          'awaiting_signup',
          true,
        ]);
        const renewal = await s.site.subscriptions.previewRenewal(subscription.id);
        expect(renewal.manifest.lineItems.map((l) => [l.kind, l.amountInCents])).toEqual([
          ['baseline', 1000],
          ['metered_component', 200],
          ['initial', 500],
        ]);
        const during = await s.site.proformaInvoices.preview(subscription.id);
        expect(during.lineItems).toEqual(awaiting.lineItems);
        expect(during.totalInCents).toBe(1700);
        held.releaseAll();
        await running;
        expect(await billed(s, subscription.id)).toEqual([
          ['baseline', 1000],
          ['metered_component', 200],
          ['initial', 500],
        ]);
      });
    });

    describe('a moved start and the expiry', () => {
      it("moves an expiry derived from the product's expiration interval with the start", async () => {
        const f = fixture();
        const s = await setup(f);
        const { subscription } = await delayed(s, { productHandle: 'expiring' });
        expect(subscription.expiresAt).toEqual(at('2026-09-05T00:00:00Z'));
        const moved = await s.site.subscriptions.changeBillingDate(subscription.id, '2026-03-10T00:00:00Z');
        expect([moved.subscription.state, moved.subscription.expiresAt]).toEqual([
          'awaiting_signup',
          at('2026-09-10T00:00:00Z'),
        ]);
        // A start past the old expiry is allowed: the expiry moves past it too.
        const later = await s.site.subscriptions.changeBillingDate(subscription.id, '2026-10-01T00:00:00Z');
        expect(later.subscription.expiresAt).toEqual(at('2027-04-01T00:00:00Z'));

        // It expires at the first renewal on or after the moved expiry, not at the old one.
        f.clock.set('2026-10-01T00:00:00Z');
        await f.engine.runDue();
        for (const month of ['11', '12']) {
          f.clock.set(`2026-${month}-01T00:00:00Z`);
          await f.engine.runDue();
        }
        for (const month of ['01', '02', '03']) {
          f.clock.set(`2027-${month}-01T00:00:00Z`);
          await f.engine.runDue();
        }
        expect((await s.site.subscriptions.get(subscription.id)).subscription.state).toBe('active');
        f.clock.set('2027-04-01T00:00:00Z');
        await f.engine.runDue();
        expect((await s.site.subscriptions.get(subscription.id)).subscription.state).toBe('expired');
      });

      it('a start moved to now counts the derived expiry from now', async () => {
        const f = fixture();
        const s = await setup(f);
        const { subscription } = await delayed(s, { productHandle: 'expiring' });
        const started = await s.site.subscriptions.changeBillingDate(subscription.id, '2026-03-01T00:00:00Z');
        expect([started.subscription.state, started.subscription.expiresAt]).toEqual([
          'active',
          at('2026-09-02T10:00:00Z'),
        ]);
      });

      it('leaves an expires_at the caller gave where it is, and refuses a start at or after it', async () => {
        const f = fixture();
        const s = await setup(f);
        const { subscription } = await delayed(s, { productHandle: 'expiring', expiresAt: '2026-09-05T00:00:00Z' });
        // The given expiry is the instant the product's interval would give: it is still the caller's.
        expect(subscription.expiresAt).toEqual(at('2026-09-05T00:00:00Z'));
        const moved = await s.site.subscriptions.changeBillingDate(subscription.id, '2026-03-10T00:00:00Z');
        expect(moved.subscription.expiresAt).toEqual(at('2026-09-05T00:00:00Z'));
        const error = await rejection(s.site.subscriptions.changeBillingDate(subscription.id, '2026-09-05T00:00:00Z'));
        expect([error.httpStatus, error.details?.[0]?.attribute]).toEqual([422, 'next_billing_at']);
      });

      it('leaves an expiry set by an override where it is', async () => {
        const f = fixture();
        const s = await setup(f);
        const { subscription } = await delayed(s, { productHandle: 'expiring' });
        await s.site.subscriptions.override(subscription.id, { expiresAt: '2026-08-01T00:00:00Z' });
        const moved = await s.site.subscriptions.changeBillingDate(subscription.id, '2026-03-10T00:00:00Z');
        expect(moved.subscription.expiresAt).toEqual(at('2026-08-01T00:00:00Z'));
        const error = await rejection(s.site.subscriptions.changeBillingDate(subscription.id, '2026-08-01T00:00:00Z'));
        expect([error.httpStatus, error.details?.[0]?.attribute]).toEqual([422, 'next_billing_at']);
      });
    });

    it("refuses a billing-date change while the start's first payment is in flight (422); the start completes as planned", async () => {
      const f = fixture();
      const s = await setup(f);
      const { subscription } = await delayed(s);
      const held = heldStartGateway(f.gateway);
      const worker = createBillingEngine({ storage: f.storage, clock: f.clock, gateway: held.gateway });
      f.clock.set(DELAYED_TO);
      const running = worker.runDue();
      await held.held;

      // The attempt is committed and the gateway has not answered.
      const inFlight = await s.site.subscriptions.get(subscription.id);
      expect([inFlight.subscription.state, inFlight.subscription.data.pendingStart != null]).toEqual([
        'awaiting_signup',
        true,
      ]);
      const error = await rejection(s.site.subscriptions.changeBillingDate(subscription.id, '2026-03-20T00:00:00Z'));
      expect([error.httpStatus, error.code, error.message, error.details?.[0]?.attribute]).toEqual([
        422,
        'validation',
        'Next billing at: the subscription is starting and its first payment is in progress; try again when it has settled.',
        'next_billing_at',
      ]);
      const unchanged = await s.site.subscriptions.get(subscription.id);
      expect(unchanged.subscription.version).toBe(inFlight.subscription.version);
      expect(unchanged.subscription.nextAssessmentAt).toEqual(at(DELAYED_TO));
      expect(f.gateway.chargeCalls).toBe(0);

      held.releaseAll();
      await running;
      const started = await s.site.subscriptions.get(subscription.id);
      expect(started.subscription).toMatchObject({
        state: 'active',
        currentPeriodStartedAt: at(DELAYED_TO),
        currentPeriodEndsAt: at('2026-04-05T00:00:00Z'),
      });
      expect(started.subscription.data.pendingStart).toBeUndefined();
      expect(started.balanceInCents).toBe(0);
      expect(f.gateway.chargeCalls).toBe(1);
      // Nothing of the refused change was kept: no start is due at its date.
      f.clock.set('2026-03-20T00:00:00Z');
      await f.engine.runDue();
      expect(f.gateway.chargeCalls).toBe(1);
      // Once settled, the billing date of the active subscription can change.
      const changed = await s.site.subscriptions.changeBillingDate(subscription.id, '2026-04-20T00:00:00Z');
      expect(changed.subscription.nextAssessmentAt).toEqual(at('2026-04-20T00:00:00Z'));
    });
  });
}
