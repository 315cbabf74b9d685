import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/**
 * `acme` (USD, New York) with `basic` (10.00 a month) and `trial` (10.00 a month after a 14-day
 * free trial, 5.00 setup fee charged after the trial), component Seats (4.00 a seat), a recurring
 * 10% coupon TENOFF; and `globex`, to show that proforma invoices stay in their site.
 */
async function setup(f: EngineFixture) {
  const acmeSite = await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'America/New_York' });
  await f.engine.sites.create({ subdomain: 'globex', currency: 'USD', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  await acme.catalog.createProduct(family.id, {
    name: 'Trial',
    handle: 'trial',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
    trialInterval: 14,
    trialIntervalUnit: 'day',
    trialPriceInCents: 0,
    initialChargeInCents: 500,
    initialChargeAfterTrial: true,
  });
  const seats = await acme.components.create(family.id, {
    name: 'Seats',
    kind: 'quantity_based',
    unitName: 'seat',
    handle: 'seats',
    unitPrice: '4',
  });
  await acme.coupons.create({
    name: 'Ten off',
    code: 'TENOFF',
    percentage: '10',
    recurring: true,
    productFamilyId: family.id,
  });
  let n = 0;
  const subscribe = async (productHandle: string, extra: Record<string, unknown> = {}) =>
    (
      await acme.subscriptions.create({
        productHandle,
        customer: { firstName: 'Ada', lastName: 'Lovelace', email: `ada${++n}@example.com` },
        creditCard: VISA,
        ...extra,
      })
    ).subscription;
  /** Ledger lines, customers, subscriptions and invoices of the site: what a proforma must never change. */
  const billingState = async () => {
    const counts = await f.storage.transaction((tx) => tx.siteData.counts(acmeSite.site.id));
    const invoices = await acme.invoices.list({ perPage: 200 });
    return { ...counts, invoices: invoices.total };
  };
  return {
    acme,
    globex: f.engine.site('globex'),
    siteId: acmeSite.site.id,
    seats: seats.component.id,
    subscribe,
    billingState,
  };
}

/** Proforma invoices of subscriptions and signups, on every adapter. */
export function proformaInvoicesSuite(harness: StorageHarness): void {
  describe(`proforma invoices (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-01-15T17:00:00Z');

    it("keeps the next renewal as a numbered draft, from the renewal's own assessment, billing nothing", async () => {
      const f = fixture();
      const s = await setup(f);
      const sub = await s.subscribe('basic', {
        couponCode: 'TENOFF',
        components: [{ componentId: s.seats, allocatedQuantity: 2 }],
      });
      const before = await s.billingState();
      const renewal = await s.acme.subscriptions.previewRenewal(sub.id);

      const first = await s.acme.proformaInvoices.create(sub.id);
      expect(first.uid).toMatch(/^pro_[0-9a-z]{14}$/);
      expect({
        number: first.number,
        status: first.status,
        subscriptionId: first.subscriptionId,
        customerId: first.customerId,
        role: first.role,
        collectionMethod: first.collectionMethod,
        deliveryDate: first.deliveryDate,
        productName: first.productName,
        productFamilyName: first.productFamilyName,
        createdAt: first.createdAt.toISOString(),
      }).toEqual({
        number: 1,
        status: 'draft',
        subscriptionId: sub.id,
        customerId: sub.customerId,
        role: 'proforma_adhoc',
        collectionMethod: 'automatic',
        // The renewal is due 2026-02-15 12:00 New York time.
        deliveryDate: '2026-02-15',
        productName: 'Basic',
        productFamilyName: 'Plans',
        createdAt: '2026-01-15T17:00:00.000Z',
      });
      // 10.00 + 2 seats at 4.00, less 10%.
      expect([first.subtotalInCents, first.discountInCents, first.totalInCents, first.dueInCents]).toEqual([
        1800, 180, 1620, 1620,
      ]);
      expect(first.totalInCents).toBe(renewal.manifest.totalInCents);
      expect(first.lineItems.map((l) => [l.kind, l.subtotalInCents, l.discountInCents, l.totalInCents])).toEqual(
        renewal.manifest.lineItems.map((l) => [
          l.kind,
          l.amountInCents,
          l.discountAmountInCents,
          l.amountInCents - l.discountAmountInCents,
        ]),
      );
      expect(first.lineItems.map((l) => l.componentId)).toEqual([null, s.seats]);
      expect(first.discounts).toEqual([{ title: expect.any(String), couponCode: 'TENOFF', amountInCents: 180 }]);
      expect(first.lineItems[0]!.periodStart!.toISOString()).toBe(renewal.manifest.startDate.toISOString());
      expect(first.customer).toMatchObject({ customerId: sub.customerId, firstName: 'Ada', email: 'ada1@example.com' });

      // Nothing was billed: no ledger line, invoice, customer or subscription.
      expect(await s.billingState()).toEqual(before);

      const second = await s.acme.proformaInvoices.create(sub.id);
      expect(second.number).toBe(2);
      expect(second.uid).not.toBe(first.uid);
      expect(await s.acme.proformaInvoices.get(first.uid)).toEqual(first);
    });

    it('previews what create would keep, and keeps nothing', async () => {
      const f = fixture();
      const s = await setup(f);
      const sub = await s.subscribe('basic', { couponCode: 'TENOFF' });
      const preview = await s.acme.proformaInvoices.preview(sub.id);
      expect('uid' in preview).toBe(false);
      expect((await s.acme.proformaInvoices.list(sub.id)).total).toBe(0);
      const created = await s.acme.proformaInvoices.create(sub.id);
      const { id: _id, uid: _uid, number: _n, status: _s, voidedAt: _v, voidReason: _r, ...content } = created;
      expect(content).toEqual(preview);
    });

    it("shows a trial's first paid period with the deferred setup fee", async () => {
      const f = fixture();
      const s = await setup(f);
      const sub = await s.subscribe('trial');
      expect(sub.state).toBe('trialing');
      const proforma = await s.acme.proformaInvoices.create(sub.id);
      expect(proforma.lineItems.map((l) => [l.kind, l.totalInCents])).toEqual([
        ['baseline', 1000],
        ['initial', 500],
      ]);
      expect(proforma.deliveryDate).toBe('2026-01-29');
    });

    it('refuses a subscription that does not renew, and an unknown one, keeping nothing', async () => {
      const f = fixture();
      const s = await setup(f);
      const sub = await s.subscribe('basic');
      await s.acme.subscriptions.cancel(sub.id, {});
      const refused = await rejection(s.acme.proformaInvoices.create(sub.id));
      expect(refused.code).toBe('invalid_transition');
      expect(refused.message).toContain('this one is cancelled');
      expect((await rejection(s.acme.proformaInvoices.preview(sub.id))).code).toBe('invalid_transition');
      expect((await rejection(s.acme.proformaInvoices.create(999_999))).code).toBe('not_found');
      expect((await rejection(s.acme.proformaInvoices.list(999_999))).code).toBe('not_found');
      expect((await s.acme.proformaInvoices.list(sub.id)).total).toBe(0);
      // Another site's subscription is unknown here.
      expect((await rejection(s.globex.proformaInvoices.create(sub.id))).code).toBe('not_found');
    });

    it('voids a draft once, with a reason', async () => {
      const f = fixture();
      const s = await setup(f);
      const sub = await s.subscribe('basic');
      const made = await s.acme.proformaInvoices.create(sub.id);
      const blank = await rejection(s.acme.proformaInvoices.void(made.uid, '  '));
      expect(blank.messages).toEqual(['Reason: cannot be blank.']);
      expect((await s.acme.proformaInvoices.get(made.uid)).status).toBe('draft');

      f.clock.set('2026-01-16T09:00:00Z');
      const voided = await s.acme.proformaInvoices.void(made.uid, ' Prices changed ');
      expect({ status: voided.status, reason: voided.voidReason, at: voided.voidedAt?.toISOString() }).toEqual({
        status: 'voided',
        reason: 'Prices changed',
        at: '2026-01-16T09:00:00.000Z',
      });
      expect(voided.totalInCents).toBe(made.totalInCents);
      expect(await s.acme.proformaInvoices.get(made.uid)).toEqual(voided);
      const again = await rejection(s.acme.proformaInvoices.void(made.uid, 'Twice'));
      expect(again.code).toBe('validation');
      expect((await s.acme.proformaInvoices.get(made.uid)).voidReason).toBe('Prices changed');
      expect((await rejection(s.acme.proformaInvoices.void('pro_nope', 'x'))).code).toBe('not_found');
      expect((await rejection(s.globex.proformaInvoices.get(made.uid))).code).toBe('not_found');
      expect((await rejection(s.globex.proformaInvoices.void(made.uid, 'x'))).code).toBe('not_found');
    });

    it("lists a subscription's proforma invoices by number, filtered and paged", async () => {
      const f = fixture();
      const s = await setup(f);
      const sub = await s.subscribe('basic');
      const other = await s.subscribe('basic');
      const a = await s.acme.proformaInvoices.create(sub.id);
      await s.acme.proformaInvoices.create(other.id);
      f.clock.set('2026-02-20T17:00:00Z');
      await f.engine.runDue();
      const b = await s.acme.proformaInvoices.create(sub.id);
      const c = await s.acme.proformaInvoices.create(sub.id);
      await s.acme.proformaInvoices.void(c.uid, 'Superseded');

      const numbers = async (query: Parameters<typeof s.acme.proformaInvoices.list>[1] = {}) =>
        (await s.acme.proformaInvoices.list(sub.id, query)).proformaInvoices.map((p) => p.number);
      expect(await numbers()).toEqual([c.number, b.number, a.number]);
      expect(await numbers({ direction: 'asc' })).toEqual([a.number, b.number, c.number]);
      expect(await numbers({ status: 'draft', direction: 'asc' })).toEqual([a.number, b.number]);
      expect(await numbers({ status: 'voided' })).toEqual([c.number]);
      // Delivery dates: a's renewal is due 2026-02-15, b's and c's 2026-03-15.
      expect(await numbers({ startDate: '2026-03-01' })).toEqual([c.number, b.number]);
      expect(await numbers({ endDate: '2026-02-15' })).toEqual([a.number]);
      const page = await s.acme.proformaInvoices.list(sub.id, { perPage: 2, page: 2, direction: 'asc' });
      expect({ numbers: page.proformaInvoices.map((p) => p.number), total: page.total, perPage: page.perPage }).toEqual(
        {
          numbers: [c.number],
          total: 3,
          perPage: 2,
        },
      );

      const bad = await rejection(
        s.acme.proformaInvoices.list(sub.id, {
          status: 'open' as never,
          startDate: '2026-02-30',
          direction: 'up' as never,
        }),
      );
      expect(bad.messages).toEqual([
        'Status: must be one of draft, voided.',
        'Start date: must be a date (YYYY-MM-DD).',
        "Direction: must be 'asc' or 'desc'.",
      ]);
    });

    it("keeps a signup's bill as the signup would issue it, without signing up", async () => {
      const f = fixture();
      const s = await setup(f);
      const input = {
        productHandle: 'basic',
        customer: { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com', organization: 'Navy' },
        couponCode: 'TENOFF',
        components: [{ componentId: s.seats, allocatedQuantity: 3 }],
      };
      const before = await s.billingState();
      const expected = await s.acme.subscriptions.previewSignup(input);
      const proforma = await s.acme.proformaInvoices.createSignup(input);
      expect({
        number: proforma.number,
        subscriptionId: proforma.subscriptionId,
        customerId: proforma.customerId,
        deliveryDate: proforma.deliveryDate,
        total: proforma.totalInCents,
        discount: proforma.discountInCents,
        customer: proforma.customer,
      }).toEqual({
        number: 1,
        subscriptionId: null,
        customerId: null,
        deliveryDate: '2026-01-15',
        total: expected.currentBillingManifest.totalInCents,
        discount: expected.currentBillingManifest.totalDiscountInCents,
        customer: {
          customerId: null,
          firstName: 'Grace',
          lastName: 'Hopper',
          organization: 'Navy',
          email: 'grace@example.com',
          reference: null,
          billingAddress: expect.any(Object),
        },
      });
      // 10.00 + 3 seats at 4.00, less 10%.
      expect(proforma.totalInCents).toBe(1980);
      expect(proforma.lineItems.map((l) => l.subtotalInCents)).toEqual([1000, 1200]);
      expect(proforma.discounts.map((d) => [d.couponCode, d.amountInCents])).toEqual([['TENOFF', 220]]);
      // No customer, subscription, ledger line or invoice was made; the coupon was not used.
      expect(await s.billingState()).toEqual(before);
      expect(await s.acme.proformaInvoices.get(proforma.uid)).toEqual(proforma);
    });

    it('names an existing customer on a signup proforma, and previews the first renewal when asked', async () => {
      const f = fixture();
      const s = await setup(f);
      const existing = await s.subscribe('basic');
      const input = { productHandle: 'trial', customerId: existing.customerId };
      const kept = await s.acme.proformaInvoices.createSignup(input);
      expect([kept.customerId, kept.customer.customerId, kept.totalInCents, kept.lineItems]).toEqual([
        existing.customerId,
        existing.customerId,
        0,
        [],
      ]);

      const preview = await s.acme.proformaInvoices.previewSignup(input, { includeNext: true });
      const signup = await s.acme.subscriptions.previewSignup(input);
      expect(preview.next?.totalInCents).toBe(signup.nextBillingManifest.totalInCents);
      expect(preview.next?.lineItems.map((l) => [l.kind, l.totalInCents])).toEqual([
        ['baseline', 1000],
        ['initial', 500],
      ]);
      expect(preview.next?.subscriptionId).toBeNull();
      expect(preview.next?.deliveryDate).toBe('2026-01-29');
      expect((await s.acme.proformaInvoices.previewSignup(input)).next).toBeNull();
      // Only the created one is kept (its number is 1; a preview takes none).
      expect((await s.acme.proformaInvoices.createSignup(input)).number).toBe(2);

      // Named by one of its cards, the customer pays with it: no stand-in card is added beside it.
      const byCard = { productHandle: 'basic', paymentProfileId: existing.paymentProfileId! };
      const carded = await s.acme.proformaInvoices.previewSignup(byCard);
      expect([carded.current.customerId, carded.current.totalInCents]).toEqual([existing.customerId, 1000]);
      expect((await s.acme.subscriptions.previewSignup(byCard)).currentBillingManifest.totalInCents).toBe(1000);
    });

    it('refuses a signup proforma as the signup would, or without a customer, keeping nothing', async () => {
      const f = fixture();
      const s = await setup(f);
      const missing = await rejection(
        s.acme.proformaInvoices.createSignup({
          productHandle: 'nope',
          customer: { firstName: 'A', lastName: 'B', email: 'a@example.com' },
        }),
      );
      const signupError = await rejection(
        s.acme.subscriptions.create({
          productHandle: 'nope',
          customer: { firstName: 'A', lastName: 'B', email: 'a@example.com' },
          creditCard: VISA,
        }),
      );
      expect([missing.code, missing.message]).toEqual([signupError.code, signupError.message]);
      const nobody = await rejection(s.acme.proformaInvoices.createSignup({ productHandle: 'basic' }));
      expect(nobody.code).toBe('validation');
      expect(nobody.messages[0]).toMatch(/^Customer: /);
      const created = await s.acme.proformaInvoices.createSignup({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@example.com' },
      });
      // The refused ones took no number.
      expect(created.number).toBe(1);
    });

    it('exports the proforma invoices of the site, oldest first', async () => {
      const f = fixture();
      const s = await setup(f);
      const sub = await s.subscribe('basic');
      const a = await s.acme.proformaInvoices.create(sub.id);
      const b = await s.acme.proformaInvoices.createSignup({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@example.com' },
      });
      await s.acme.proformaInvoices.void(a.uid, 'Old');
      await s.globex.exports.exportSubscriptions();
      const job = await s.acme.exports.exportProformaInvoices();
      expect([job.kind, job.status, job.rowCount]).toEqual(['proforma_invoices', 'completed', 2]);
      expect(await s.acme.exports.rows('proforma_invoices', job.id)).toEqual([{ uid: a.uid }, { uid: b.uid }]);
      expect((await rejection(s.acme.exports.read('invoices', job.id))).code).toBe('not_found');
      expect((await rejection(s.globex.exports.read('proforma_invoices', job.id))).code).toBe('not_found');
    });

    it("goes with its subscription's purge and the site's cleared data; numbers are not reused", async () => {
      const f = fixture();
      const s = await setup(f);
      const kept = await s.subscribe('basic');
      const purged = await s.subscribe('basic');
      const keep = await s.acme.proformaInvoices.create(kept.id);
      const gone = await s.acme.proformaInvoices.create(purged.id);
      await s.acme.subscriptions.purge(purged.id, { ack: purged.customerId });
      expect((await rejection(s.acme.proformaInvoices.get(gone.uid))).code).toBe('not_found');
      expect((await s.acme.proformaInvoices.get(keep.uid)).uid).toBe(keep.uid);

      await f.engine.sites.clearData('acme');
      expect((await rejection(s.acme.proformaInvoices.get(keep.uid))).code).toBe('not_found');
      const again = await s.subscribe('basic');
      expect((await s.acme.proformaInvoices.create(again.id)).number).toBe(3);
    });
  });
}
