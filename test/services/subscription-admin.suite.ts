import { type BillingEvent, createBillingEngine, type PaymentGateway } from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/** A test site with a product (setup fee), a trial product, a seat component and a 10% coupon. */
async function setup(f: EngineFixture, mode: 'test' | 'live' = 'test') {
  const { site } = await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC', mode });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 3000,
    interval: 1,
    intervalUnit: 'month',
    initialChargeInCents: 500,
  });
  await acme.catalog.createProduct(family.id, {
    name: 'Trial',
    handle: 'trial',
    priceInCents: 2000,
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
  const usage = await acme.components.create(family.id, {
    name: 'Data',
    kind: 'metered',
    unitName: 'GB',
    handle: 'data',
    unitPrice: '0.5',
  });
  await acme.coupons.create({
    name: 'Ten',
    code: 'TEN',
    percentage: '10',
    recurring: true,
    productFamilyId: family.id,
  });
  await acme.metafields.createFields('subscriptions', { name: 'color' });
  await acme.metafields.createFields('customers', { name: 'tier' });
  return { acme, siteId: site.id, seats: seats.component.id, data: usage.component.id };
}

type Setup = Awaited<ReturnType<typeof setup>>;

let emails = 0;
function signupInput(s: Setup) {
  return {
    productHandle: 'basic',
    customer: { firstName: 'Ada', lastName: 'Lovelace', email: `ada${++emails}@example.com` },
    creditCard: VISA,
    couponCode: 'TEN',
    components: [{ componentId: s.seats, allocatedQuantity: 3 }],
  };
}

/** Everything stored about a site's customers, read through the ports. */
async function siteRows(f: EngineFixture, siteId: number) {
  return f.storage.transaction(async (tx) => {
    const subscriptions = await tx.subscriptions.list(siteId, {}, { page: 1, perPage: 100 });
    const perSubscription = [];
    for (const s of subscriptions) {
      perSubscription.push({
        subscription: s,
        lines: await tx.ledger.listForSubscription(siteId, s.id),
        components: await tx.subscriptionComponents.listForSubscription(siteId, s.id),
        notes: await tx.notes.listForSubscription(siteId, s.id),
      });
    }
    return {
      counts: await tx.siteData.counts(siteId),
      customers: await tx.customers.list(siteId, { page: 1, perPage: 100 }),
      perSubscription,
      events: await tx.outbox.listAfter(siteId, 0, 1000),
    };
  });
}

/** A subscription with a row in every table a purge clears: lines, components, usage, notes, metadata, events. */
async function fullSubscription(s: Setup) {
  const view = await s.acme.subscriptions.create(signupInput(s));
  const id = view.subscription.id;
  await s.acme.allocations.allocate(id, s.seats, { quantity: 5 });
  await s.acme.allocations.recordUsage(id, s.data, { quantity: 7 });
  await s.acme.notes.create(id, { body: 'Called the customer' });
  await s.acme.metafields.setMetadata('subscriptions', id, [{ name: 'color', value: 'blue' }]);
  await s.acme.metafields.setMetadata('customers', view.customer.id, [{ name: 'tier', value: 'gold' }]);
  await s.acme.ledger.charge(id, { amount: '3.00', memo: 'Extra' });
  return view;
}

/** Signup previews and purges through the engine. */
export function subscriptionAdminSuite(harness: StorageHarness): void {
  describe(`signup preview (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-03-02T10:00:00Z');

    it('prices exactly as the signup then charges: base, setup fee, components and coupon, and the first renewal', async () => {
      const f = fixture();
      const s = await setup(f);
      const input = signupInput(s);
      const preview = await s.acme.subscriptions.previewSignup(input);
      const current = preview.currentBillingManifest;
      // 3000 + 500 setup + 3 seats at 900 = 6200; 10% off = 620.
      expect(current.subtotalInCents).toBe(6200);
      expect(current.totalDiscountInCents).toBe(620);
      expect(current.totalInCents).toBe(5580);
      expect(current.lineItems.map((l) => [l.kind, l.amountInCents])).toEqual([
        ['baseline', 3000],
        ['initial', 500],
        ['quantity_based_component', 2700],
      ]);
      expect(current.lineItems.reduce((sum, l) => sum + l.discountAmountInCents, 0)).toBe(620);
      expect(current.periodType).toBe('recurring');
      expect(current.existingBalanceInCents).toBe(0);

      const view = await s.acme.subscriptions.create({ ...input, customer: { ...input.customer } });
      const lines = await s.acme.subscriptions.transactions(view.subscription.id);
      const charged = lines.filter((l) => l.type === 'charge').map((l) => [l.kind, l.amountInCents]);
      expect(current.lineItems.map((l) => [l.kind, l.amountInCents])).toEqual(charged);
      const payment = lines.find((l) => l.type === 'payment');
      expect(payment?.amountInCents).toBe(current.totalInCents);
      expect(current.startDate).toEqual(view.subscription.currentPeriodStartedAt);
      expect(current.endDate).toEqual(view.subscription.currentPeriodEndsAt);

      const renewal = await s.acme.subscriptions.previewRenewal(view.subscription.id);
      const next = preview.nextBillingManifest;
      expect(next.totalInCents).toBe(renewal.manifest.totalInCents);
      expect(next.lineItems.map((l) => [l.kind, l.amountInCents, l.discountAmountInCents])).toEqual(
        renewal.manifest.lineItems.map((l) => [l.kind, l.amountInCents, l.discountAmountInCents]),
      );
      expect(next.startDate).toEqual(renewal.manifest.startDate);
    });

    it('keeps nothing: no row, no event heard, no charge, no coupon redemption', async () => {
      const f = fixture();
      const s = await setup(f);
      await s.acme.subscriptions.create(signupInput(s));
      const before = await siteRows(f, s.siteId);
      const coupon = await s.acme.coupons.findByCode('TEN');
      const charges = f.gateway.chargeCalls;
      const heard: BillingEvent[] = [];
      f.engine.on('*', (event) => heard.push(event));
      const preview = await s.acme.subscriptions.previewSignup(signupInput(s));
      expect(preview.currentBillingManifest.totalInCents).toBe(5580);
      expect(heard).toEqual([]);
      expect(f.gateway.chargeCalls).toBe(charges);
      expect(await siteRows(f, s.siteId)).toEqual(before);
      expect((await s.acme.coupons.findByCode('TEN')).redemptions).toBe(coupon.redemptions);
    });

    it('previews a trial: nothing now, the full price (with the coupon) at the trial end', async () => {
      const f = fixture();
      const s = await setup(f);
      const preview = await s.acme.subscriptions.previewSignup({
        productHandle: 'trial',
        couponCode: 'TEN',
      });
      expect(preview.currentBillingManifest.periodType).toBe('trial');
      expect(preview.currentBillingManifest.totalInCents).toBe(0);
      expect(preview.currentBillingManifest.endDate).toEqual(new Date('2026-03-16T10:00:00Z'));
      expect(preview.nextBillingManifest.subtotalInCents).toBe(2000);
      expect(preview.nextBillingManifest.totalDiscountInCents).toBe(200);
      expect(preview.nextBillingManifest.totalInCents).toBe(1800);
      expect(preview.nextBillingManifest.startDate).toEqual(new Date('2026-03-16T10:00:00Z'));
    });

    it('needs no customer and no card, and refuses what the signup refuses, with its errors', async () => {
      const f = fixture();
      const s = await setup(f);
      const bare = await s.acme.subscriptions.previewSignup({ productHandle: 'basic' });
      expect(bare.currentBillingManifest.totalInCents).toBe(3500);
      const unknown = await rejection(s.acme.subscriptions.previewSignup({ productHandle: 'nope' }));
      expect(unknown.code).toBe('validation');
      expect(unknown.details.map((d) => d.message)).toEqual([
        "Product with API Handle 'nope' does not exist for this site.",
      ]);
      const coupon = await rejection(
        s.acme.subscriptions.previewSignup({ productHandle: 'basic', couponCode: 'NOPE' }),
      );
      expect(coupon.code).toBe('validation');
      expect(await s.acme.subscriptions.list()).toEqual([]);
    });
  });

  describe(`purge (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-03-02T10:00:00Z');

    it('removes the subscription and every record it owns, and leaves another subscription as it was', async () => {
      const f = fixture();
      const s = await setup(f);
      const other = await fullSubscription(s);
      const target = await fullSubscription(s);
      const id = target.subscription.id;
      const otherBefore = (await siteRows(f, s.siteId)).perSubscription.find((p) => p.subscription.id !== id);
      const result = await s.acme.subscriptions.purge(id, { ack: target.customer.id });
      expect(result.view.subscription.id).toBe(id);
      expect(result.removed).toMatchObject({
        subscriptions: 1,
        subscriptionComponents: 2,
        allocations: 1,
        usages: 1,
        notes: 1,
        metadata: 1,
        paymentProfiles: 0,
        customerRemoved: false,
      });
      expect(result.removed.ledgerLines).toBeGreaterThanOrEqual(5);
      expect(result.removed.paymentAttempts).toBeGreaterThanOrEqual(2);
      expect(result.removed.events).toBeGreaterThan(0);
      expect(result.removed.dueWork).toBeGreaterThan(0);
      expect((await rejection(s.acme.subscriptions.get(id))).code).toBe('not_found');
      const after = await siteRows(f, s.siteId);
      expect(after.perSubscription).toEqual([otherBefore]);
      expect(after.events.some((e) => e.subjectType === 'subscription' && e.subjectId === id)).toBe(false);
      expect(after.events.some((e) => e.subjectType === 'subscription' && e.subjectId === other.subscription.id)).toBe(
        true,
      );
      // The customer stays (no cascade), with its metadata; its profile too.
      expect((await s.acme.customers.get(target.customer.id)).id).toBe(target.customer.id);
      expect(await s.acme.metafields.listMetadata('customers', target.customer.id)).toHaveLength(1);
      await f.storage.transaction(async (tx) => {
        expect(await tx.customers.findPaymentProfile(s.siteId, target.paymentProfile!.id)).toBeDefined();
        expect(await tx.dueWork.pendingFor(s.siteId, id)).toEqual([]);
      });
      // Nothing of it is due any more: a month later only the other subscription renews.
      f.clock.advance(40 * 86_400_000);
      await f.engine.runDue();
      expect((await s.acme.subscriptions.list()).map((v) => v.subscription.id)).toEqual([other.subscription.id]);
    });

    it('with cascade removes the customer and its payment profiles, or only the profiles', async () => {
      const f = fixture();
      const s = await setup(f);
      const a = await fullSubscription(s);
      const b = await fullSubscription(s);
      const gone = await s.acme.subscriptions.purge(a.subscription.id, {
        ack: String(a.customer.id),
        cascade: ['customer', 'payment_profile'],
      });
      expect(gone.removed.customerRemoved).toBe(true);
      expect(gone.removed.paymentProfiles).toBe(1);
      expect(gone.removed.metadata).toBe(2);
      expect((await rejection(s.acme.customers.get(a.customer.id))).code).toBe('not_found');

      const kept = await s.acme.subscriptions.purge(b.subscription.id, {
        ack: b.customer.id,
        cascade: 'payment_profile',
      });
      expect(kept.removed).toMatchObject({ customerRemoved: false, paymentProfiles: 1 });
      expect((await s.acme.customers.get(b.customer.id)).id).toBe(b.customer.id);
      await f.storage.transaction(async (tx) => {
        expect(await tx.customers.findPaymentProfile(s.siteId, b.paymentProfile!.id)).toBeUndefined();
      });
    });

    it('refuses, changing nothing: a live site, a wrong or missing ack, an unknown cascade, a customer with another subscription', async () => {
      const f = fixture();
      const s = await setup(f);
      const a = await s.acme.subscriptions.create(signupInput(s));
      const second = await s.acme.subscriptions.create({
        ...signupInput(s),
        customer: undefined,
        customerId: a.customer.id,
      });
      const before = await siteRows(f, s.siteId);
      const wrong = await rejection(s.acme.subscriptions.purge(a.subscription.id, { ack: a.customer.id + 1 }));
      expect(wrong.code).toBe('validation');
      expect(wrong.details).toEqual([
        { message: "Ack: must equal the id of the subscription's customer.", attribute: 'ack' },
      ]);
      const missing = await rejection(s.acme.subscriptions.purge(a.subscription.id, { ack: undefined }));
      expect(missing.details[0]?.attribute).toBe('ack');
      const cascade = await rejection(
        s.acme.subscriptions.purge(a.subscription.id, { ack: a.customer.id, cascade: ['everything'] }),
      );
      expect(cascade.details[0]?.attribute).toBe('cascade');
      const shared = await rejection(
        s.acme.subscriptions.purge(second.subscription.id, { ack: a.customer.id, cascade: ['customer'] }),
      );
      expect(shared.code).toBe('validation');
      expect(shared.message).toContain('other subscriptions');
      expect((await rejection(s.acme.subscriptions.purge(999_999, { ack: a.customer.id }))).code).toBe('not_found');
      expect(await siteRows(f, s.siteId)).toEqual(before);

      // Straight in storage: the engine refuses to take a site with test data live.
      await f.storage.transaction(async (tx) => {
        const site = await tx.sites.findById(s.siteId);
        await tx.sites.updateAtVersion(s.siteId, site!.version, { mode: 'live' });
      });
      const live = await rejection(s.acme.subscriptions.purge(a.subscription.id, { ack: a.customer.id }));
      expect(live.code).toBe('validation');
      expect(live.message).toContain('test mode');
      expect(await siteRows(f, s.siteId)).toEqual(before);
    });

    it('refuses while a charge of the subscription awaits the gateway, and purges once it has settled', async () => {
      const f = fixture();
      const s = await setup(f);
      const view = await s.acme.subscriptions.create(signupInput(s));
      const id = view.subscription.id;
      // The same storage and gateway, but each charge waits until the test lets it through.
      let letThrough: () => void = () => {};
      let reached: () => void = () => {};
      const charging = new Promise<void>((resolve) => {
        reached = resolve;
      });
      const held: PaymentGateway = {
        name: f.gateway.name,
        supportsRefunds: f.gateway.supportsRefunds,
        tokenize: (card) => f.gateway.tokenize(card),
        refund: (request) => f.gateway.refund(request),
        lookup: (key) => f.gateway.lookup(key),
        async charge(request) {
          reached();
          await new Promise<void>((resolve) => {
            letThrough = resolve;
          });
          return f.gateway.charge(request);
        },
      };
      const holding = createBillingEngine({ storage: f.storage, clock: f.clock, gateway: held });
      const charge = holding.site('acme').ledger.charge(id, { amount: '3.00', memo: 'Extra' });
      await charging;
      const refused = await rejection(s.acme.subscriptions.purge(id, { ack: view.customer.id }));
      expect(refused.code).toBe('validation');
      expect(refused.message).toContain('outcome is not known');
      expect((await s.acme.subscriptions.get(id)).subscription.id).toBe(id);
      letThrough();
      await charge;
      const purged = await s.acme.subscriptions.purge(id, { ack: view.customer.id });
      expect(purged.removed.subscriptions).toBe(1);
      expect((await rejection(s.acme.subscriptions.get(id))).code).toBe('not_found');
    });

    it('refuses while a payment of the subscription is open, and while its collection claim is held', async () => {
      const f = fixture();
      const s = await setup(f);
      const a = await s.acme.subscriptions.create(signupInput(s));
      const id = a.subscription.id;
      const now = f.clock.now();
      const attempt = await f.storage.transaction((tx) =>
        tx.payments.insert({
          siteId: s.siteId,
          subscriptionId: id,
          customerId: a.customer.id,
          idempotencyKey: 'renewal:open',
          amountInCents: 100,
          currency: 'USD',
          purpose: 'renewal',
          status: 'unknown',
          gatewayTransactionId: null,
          message: null,
          transactionId: null,
          createdAt: now,
          updatedAt: now,
        }),
      );
      const open = await rejection(s.acme.subscriptions.purge(id, { ack: a.customer.id }));
      expect(open.code).toBe('validation');
      expect(open.message).toContain('outcome is not known');
      await f.storage.transaction((tx) =>
        tx.payments.update(s.siteId, attempt.id, { status: 'failed', updatedAt: now }),
      );
      await f.storage.transaction((tx) =>
        tx.idempotency.claim(s.siteId, 'open_collection', `subscription:${id}`, now, new Date(now.getTime() + 60_000)),
      );
      const claimed = await rejection(s.acme.subscriptions.purge(id, { ack: a.customer.id }));
      expect(claimed.code).toBe('conflict');
      expect((await s.acme.subscriptions.get(id)).subscription.id).toBe(id);
      await f.storage.transaction((tx) => tx.idempotency.release(s.siteId, 'open_collection', `subscription:${id}`));
      const purged = await s.acme.subscriptions.purge(id, { ack: a.customer.id });
      expect(purged.removed.paymentAttempts).toBeGreaterThanOrEqual(2);
    });
  });
}
