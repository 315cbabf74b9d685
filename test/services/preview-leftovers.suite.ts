import { nextBillingManifest } from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

/**
 * Previews and allocations left undone in #19: the signup preview of a delayed start shows what
 * the start bills (setup fee, trial), the billing manifest and proformas show only what the
 * renewal bills beyond an advance invoice, an allocation's payment pays the invoice the allocation
 * issued, and a delayed signup takes allocations before it starts. Each preview is compared with
 * what the engine then bills.
 */

const START = '2026-03-02T10:00:00Z';
const DELAYED_TO = '2026-03-05T00:00:00Z';
const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const ADA = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };

/**
 * basic 10.00 / month with a 5.00 setup fee; trial: 14 days at 1.00, then 20.00, with a 3.00 setup
 * fee at the start; late-fee: the same trial with its 3.00 setup fee after the trial. Seats 9.00
 * each, data 0.50 a GB, a recurring 50% coupon.
 */
async function setup(f: EngineFixture) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
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
  for (const [handle, after] of [
    ['trial', false],
    ['late-fee', true],
  ] as const) {
    await site.catalog.createProduct(family.id, {
      name: handle,
      handle,
      priceInCents: 2000,
      interval: 1,
      intervalUnit: 'month',
      trialInterval: 14,
      trialIntervalUnit: 'day',
      trialPriceInCents: 100,
      initialChargeInCents: 300,
      initialChargeAfterTrial: after,
    });
  }
  const seats = await site.components.create(family.id, {
    name: 'Seats',
    kind: 'quantity_based',
    unitName: 'seat',
    handle: 'seats',
    unitPrice: '9',
  });
  const data = await site.components.create(family.id, {
    name: 'Data',
    kind: 'metered',
    unitName: 'GB',
    handle: 'data',
    unitPrice: '0.5',
  });
  await site.coupons.create({
    name: 'Half',
    code: 'HALF',
    description: 'Half off',
    percentage: '50',
    recurring: true,
    productFamilyId: family.id,
  });
  return { site, seats: seats.component.id, data: data.component.id };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** The billed lines (charges, credits, coupon adjustments) written at or after `from`: type, kind, amount. */
async function billedSince(s: Setup, id: number, from: string) {
  const lines = await s.site.subscriptions.transactions(id);
  return lines
    .filter(
      (l) =>
        l.createdAt.getTime() >= new Date(from).getTime() &&
        (l.type === 'charge' || l.type === 'credit' || (l.type === 'adjustment' && l.kind === 'coupon')),
    )
    .map((l) => [l.type, l.kind, l.amountInCents]);
}

/** A manifest's lines as the ledger would carry them: its items, then one coupon line per coupon. */
function manifestLines(m: {
  lineItems: readonly { transactionType: string; kind: string; amountInCents: number }[];
  totalDiscountInCents: number;
}) {
  const items = m.lineItems.map((i) => [i.transactionType, i.kind, i.amountInCents]);
  return { items, discount: m.totalDiscountInCents };
}

/** The ledger's billed lines split like {@link manifestLines}: items, and the coupons' total. */
function ledgerLines(lines: readonly (string | number | null)[][]) {
  return {
    items: lines.filter((l) => l[0] !== 'adjustment'),
    discount: lines.filter((l) => l[0] === 'adjustment').reduce((sum, l) => sum - Number(l[2]), 0),
  };
}

async function runTo(f: EngineFixture, at: string) {
  f.clock.set(at);
  return f.engine.runDue();
}

export function previewLeftoversSuite(harness: StorageHarness): void {
  describe(`preview leftovers: delayed-start previews, advance-invoice differences, allocation payments (${harness.name})`, () => {
    const fixture = useEngine(harness, START);

    describe('the signup preview of a delayed start', () => {
      it('shows the start with its setup fee, components and coupon, as the start then bills it', async () => {
        const f = fixture();
        const s = await setup(f);
        const input = {
          productHandle: 'basic',
          customer: ADA,
          creditCard: VISA,
          initialBillingAt: DELAYED_TO,
          components: [{ componentId: s.seats, allocatedQuantity: 2 }],
          couponCodes: ['HALF'],
        };
        const preview = await s.site.subscriptions.previewSignup(input);
        const current = preview.currentBillingManifest;
        // 10.00 + 5.00 setup + 2 x 9.00 = 33.00, half off.
        expect(current.lineItems.map((i) => [i.kind, i.amountInCents])).toEqual([
          ['baseline', 1000],
          ['quantity_based_component', 1800],
          ['initial', 500],
        ]);
        expect([current.subtotalInCents, current.totalDiscountInCents, current.totalInCents]).toEqual([
          3300, 1650, 1650,
        ]);
        expect([current.periodType, current.startDate, current.endDate]).toEqual([
          'recurring',
          new Date(DELAYED_TO),
          new Date('2026-04-05T00:00:00Z'),
        ]);
        const next = preview.nextBillingManifest;
        expect([next.startDate, next.totalInCents]).toEqual([new Date('2026-04-05T00:00:00Z'), 1400]);
        expect(f.gateway.chargeCalls).toBe(0);

        const view = await s.site.subscriptions.create(input);
        expect(view.subscription.state).toBe('awaiting_signup');
        await runTo(f, DELAYED_TO);
        const started = await s.site.subscriptions.get(view.subscription.id);
        expect(started.subscription.state).toBe('active');
        const billed = await billedSince(s, view.subscription.id, DELAYED_TO);
        expect(ledgerLines(billed)).toEqual(manifestLines(current));
        const [invoice] = (await s.site.invoices.list({ subscriptionId: view.subscription.id })).invoices;
        expect([invoice?.role, invoice?.totalInCents, invoice?.status]).toEqual([
          'signup',
          current.totalInCents,
          'paid',
        ]);
        expect(f.gateway.chargeCalls).toBe(1);

        // The next manifest is the renewal after the start.
        await runTo(f, '2026-04-05T00:00:00Z');
        const renewed = await billedSince(s, view.subscription.id, '2026-04-05T00:00:00Z');
        expect(ledgerLines(renewed)).toEqual(manifestLines(next));
      });

      it('shows the trial a trial product starts with (trial price and setup fee), then the period after it', async () => {
        const f = fixture();
        const s = await setup(f);
        const input = { productHandle: 'trial', customer: ADA, creditCard: VISA, initialBillingAt: DELAYED_TO };
        const preview = await s.site.subscriptions.previewSignup(input);
        const current = preview.currentBillingManifest;
        expect(current.periodType).toBe('trial');
        expect(current.lineItems.map((i) => [i.kind, i.amountInCents])).toEqual([
          ['trial', 100],
          ['initial', 300],
        ]);
        expect([current.startDate, current.endDate, current.totalInCents]).toEqual([
          new Date(DELAYED_TO),
          new Date('2026-03-19T00:00:00Z'),
          400,
        ]);
        const next = preview.nextBillingManifest;
        expect([next.startDate, next.endDate, next.totalInCents]).toEqual([
          new Date('2026-03-19T00:00:00Z'),
          new Date('2026-04-19T00:00:00Z'),
          2000,
        ]);

        const { subscription } = await s.site.subscriptions.create(input);
        await runTo(f, DELAYED_TO);
        expect((await s.site.subscriptions.get(subscription.id)).subscription.state).toBe('trialing');
        expect(ledgerLines(await billedSince(s, subscription.id, DELAYED_TO))).toEqual(manifestLines(current));
        await runTo(f, '2026-03-19T00:00:00Z');
        expect(ledgerLines(await billedSince(s, subscription.id, '2026-03-19T00:00:00Z'))).toEqual(manifestLines(next));
      });

      it('a setup fee deferred past the trial is in the next manifest, not the start', async () => {
        const f = fixture();
        const s = await setup(f);
        const input = { productHandle: 'late-fee', customer: ADA, creditCard: VISA, initialBillingAt: DELAYED_TO };
        const preview = await s.site.subscriptions.previewSignup(input);
        expect(preview.currentBillingManifest.lineItems.map((i) => [i.kind, i.amountInCents])).toEqual([
          ['trial', 100],
        ]);
        expect(preview.nextBillingManifest.lineItems.map((i) => [i.kind, i.amountInCents])).toEqual([
          ['baseline', 2000],
          ['initial', 300],
        ]);
        const { subscription } = await s.site.subscriptions.create(input);
        await runTo(f, DELAYED_TO);
        expect(ledgerLines(await billedSince(s, subscription.id, DELAYED_TO))).toEqual(
          manifestLines(preview.currentBillingManifest),
        );
        await runTo(f, '2026-03-19T00:00:00Z');
        expect(ledgerLines(await billedSince(s, subscription.id, '2026-03-19T00:00:00Z'))).toEqual(
          manifestLines(preview.nextBillingManifest),
        );
      });

      it('the signup proforma of a delayed start is the start’s invoice, dated the day it bills', async () => {
        const f = fixture();
        const s = await setup(f);
        const input = { productHandle: 'basic', customer: ADA, initialBillingAt: DELAYED_TO };
        const proforma = await s.site.proformaInvoices.previewSignup(input, { includeNext: true });
        expect(proforma.current.deliveryDate).toBe('2026-03-05');
        expect(proforma.current.lineItems.map((i) => [i.kind, i.totalInCents])).toEqual([
          ['baseline', 1000],
          ['initial', 500],
        ]);
        expect(proforma.current.totalInCents).toBe(1500);
        expect([proforma.next?.deliveryDate, proforma.next?.totalInCents]).toEqual(['2026-04-05', 1000]);
        // Nothing was kept: no subscription, no charge.
        expect((await s.site.subscriptions.list()).length).toBe(0);
        expect(f.gateway.chargeCalls).toBe(0);
      });
    });

    describe('previews after an advance invoice', () => {
      /** A subscription to basic with two seats (28.00 a period), paid at signup. */
      async function subscribed(s: Setup) {
        const view = await s.site.subscriptions.create({
          productHandle: 'basic',
          customer: ADA,
          creditCard: VISA,
          components: [{ componentId: s.seats, allocatedQuantity: 2 }],
        });
        return view.subscription.id;
      }

      it('the renewal preview and the proforma show only what the renewal bills beyond the advance invoice', async () => {
        const f = fixture();
        const s = await setup(f);
        const id = await subscribed(s);
        const full = await s.site.subscriptions.previewRenewal(id);
        expect(full.manifest.totalInCents).toBe(2800);
        expect(full.manifest.advanceInvoiceUid).toBeNull();

        const advance = await s.site.advanceInvoices.issue(id);
        expect(advance.totalInCents).toBe(2800);
        // Nothing changed since: the renewal bills nothing more, and collects the advance invoice.
        const unchanged = await s.site.subscriptions.previewRenewal(id);
        expect(unchanged.manifest.advanceInvoiceUid).toBe(advance.uid);
        expect(unchanged.manifest.lineItems).toEqual([]);
        expect(unchanged.manifest.totalInCents).toBe(0);
        expect([unchanged.existingBalanceInCents, unchanged.totalAmountDueInCents]).toEqual([2800, 2800]);

        // A seat more (accrued: 9.00 for the rest of this period) and 4 GB of data: the renewal
        // bills one seat more for the next period and the usage.
        f.clock.set('2026-03-17T10:00:00Z');
        await s.site.allocations.allocate(id, s.seats, { quantity: 3, accrueCharge: true, upgradeCharge: 'none' });
        await s.site.allocations.recordUsage(id, s.data, { quantity: 4 });
        const preview = await s.site.subscriptions.previewRenewal(id);
        expect(preview.manifest.lineItems.map((i) => [i.transactionType, i.kind, i.amountInCents])).toEqual([
          ['charge', 'quantity_based_component', 900],
          ['charge', 'metered_component', 200],
        ]);
        expect(preview.manifest.totalInCents).toBe(1100);
        expect(preview.totalAmountDueInCents).toBe(2800 + 1100);
        const proforma = await s.site.proformaInvoices.preview(id);
        expect(proforma.lineItems.map((i) => [i.kind, i.totalInCents])).toEqual([
          ['quantity_based_component', 900],
          ['metered_component', 200],
        ]);
        expect([proforma.totalInCents, proforma.dueInCents]).toEqual([1100, 1100]);

        const chargesBefore = f.gateway.chargeCalls;
        await runTo(f, '2026-04-02T10:00:00Z');
        const renewed = await billedSince(s, id, '2026-04-02T10:00:00Z');
        expect(ledgerLines(renewed)).toEqual(manifestLines(preview.manifest));
        // The renewal collected exactly what the preview said was due.
        expect(f.gateway.chargeCalls).toBe(chargesBefore + 1);
        const view = await s.site.subscriptions.get(id);
        expect(view.balanceInCents).toBe(0);
        const invoices = (await s.site.invoices.list({ subscriptionId: id, perPage: 50 })).invoices;
        expect(invoices.filter((i) => i.status === 'open')).toEqual([]);
        const renewalInvoice = invoices.find((i) => i.uid !== advance.uid && i.periodIndex === 1);
        expect(renewalInvoice?.totalInCents).toBe(1100);
      });

      it('a quantity lowered after the advance invoice previews as the credit the renewal gives, with the coupon difference', async () => {
        const f = fixture();
        const s = await setup(f);
        const view = await s.site.subscriptions.create({
          productHandle: 'basic',
          customer: ADA,
          creditCard: VISA,
          components: [{ componentId: s.seats, allocatedQuantity: 2 }],
          couponCodes: ['HALF'],
        });
        const id = view.subscription.id;
        const advance = await s.site.advanceInvoices.issue(id);
        expect(advance.totalInCents).toBe(1400);
        await s.site.allocations.allocate(id, s.seats, { quantity: 1, downgradeCredit: 'none' });
        const preview = await s.site.subscriptions.previewRenewal(id);
        expect(preview.manifest.lineItems.map((i) => [i.transactionType, i.kind, i.amountInCents])).toEqual([
          ['credit', 'quantity_based_component', -900],
        ]);
        // Half of the 9.00 credit was a discount: 4.50 of it is given back less.
        expect(preview.manifest.discounts.map((d) => [d.code, d.amountInCents])).toEqual([['HALF', 450]]);
        expect([preview.manifest.totalDiscountInCents, preview.manifest.totalInCents]).toEqual([-450, -450]);
        const proforma = await s.site.proformaInvoices.preview(id);
        expect(proforma.discounts.map((d) => [d.couponCode, d.amountInCents])).toEqual([['HALF', -450]]);
        expect(proforma.totalInCents).toBe(-450);

        await runTo(f, '2026-04-02T10:00:00Z');
        expect(ledgerLines(await billedSince(s, id, '2026-04-02T10:00:00Z'))).toEqual(manifestLines(preview.manifest));
        expect((await s.site.subscriptions.get(id)).balanceInCents).toBe(0);
      });

      it('a voided advance invoice previews the full renewal again', async () => {
        const f = fixture();
        const s = await setup(f);
        const id = await subscribed(s);
        await s.site.advanceInvoices.issue(id);
        await s.site.advanceInvoices.void(id, 'Changed our mind');
        const preview = await s.site.subscriptions.previewRenewal(id);
        expect([preview.manifest.advanceInvoiceUid, preview.manifest.totalInCents]).toEqual([null, 2800]);
      });
    });

    describe('allocation payments', () => {
      it('pay the invoice the allocation issued, not an older open advance invoice', async () => {
        const f = fixture();
        const s = await setup(f);
        const view = await s.site.subscriptions.create({
          productHandle: 'basic',
          customer: ADA,
          creditCard: VISA,
          components: [{ componentId: s.seats, allocatedQuantity: 2 }],
        });
        const id = view.subscription.id;
        const advance = await s.site.advanceInvoices.issue(id);
        // 16 of the period's 31 days left: one seat more is 4.65 (9.00 x 16 / 31), collected now.
        f.clock.set('2026-03-17T10:00:00Z');
        const result = await s.site.allocations.allocate(id, s.seats, { quantity: 3 });
        expect([result.chargeInCents, result.payment?.status, result.payment?.amountInCents]).toEqual([
          465,
          'succeeded',
          465,
        ]);
        const invoices = (await s.site.invoices.list({ subscriptionId: id, perPage: 50 })).invoices;
        const own = invoices.find((i) => i.lineItems.some((l) => l.transactionId === result.line?.id));
        expect([own?.status, own?.dueInCents, own?.paidInCents]).toEqual(['paid', 0, 465]);
        const stillOpen = invoices.find((i) => i.uid === advance.uid);
        expect([stillOpen?.status, stillOpen?.dueInCents, stillOpen?.paidInCents]).toEqual(['open', 2800, 0]);
        expect((await s.site.subscriptions.get(id)).balanceInCents).toBe(2800);

        // The renewal collects the advance invoice (and the seat more it did not bill).
        await runTo(f, '2026-04-02T10:00:00Z');
        const after = (await s.site.invoices.list({ subscriptionId: id, perPage: 50 })).invoices;
        expect(after.filter((i) => i.status === 'open')).toEqual([]);
        expect(after.find((i) => i.uid === advance.uid)?.status).toBe('paid');
        expect((await s.site.subscriptions.get(id)).balanceInCents).toBe(0);
      });

      it('a bulk change issues one invoice, which its one payment pays', async () => {
        const f = fixture();
        const s = await setup(f);
        const view = await s.site.subscriptions.create({ productHandle: 'basic', customer: ADA, creditCard: VISA });
        const id = view.subscription.id;
        const advance = await s.site.advanceInvoices.issue(id);
        const before = (await s.site.invoices.list({ subscriptionId: id, perPage: 50 })).invoices.length;
        const bulk = await s.site.allocations.allocateMany(id, [
          { componentId: s.seats, quantity: 1, upgradeCharge: 'full' },
          { componentId: s.seats, quantity: 2, upgradeCharge: 'full' },
        ]);
        expect(bulk.payment).toMatchObject({ status: 'succeeded', amountInCents: 1800 });
        const invoices = (await s.site.invoices.list({ subscriptionId: id, perPage: 50 })).invoices;
        expect(invoices.length).toBe(before + 1);
        const own = invoices.find((i) => i.uid !== advance.uid && i.lineItems.length === 2);
        expect([own?.status, own?.totalInCents, own?.paidInCents]).toEqual(['paid', 1800, 1800]);
        expect(invoices.find((i) => i.uid === advance.uid)?.dueInCents).toBe(1000);
        expect(bulk.allocations.map((a) => a.line?.amountInCents)).toEqual([900, 900]);
      });
    });

    describe('allocations before a delayed start', () => {
      it('are taken with no charge now, and the start bills the quantity it finds', async () => {
        const f = fixture();
        const s = await setup(f);
        const input = {
          productHandle: 'basic',
          customer: ADA,
          creditCard: VISA,
          initialBillingAt: DELAYED_TO,
          components: [{ componentId: s.seats, allocatedQuantity: 1 }],
        };
        const { subscription } = await s.site.subscriptions.create(input);
        const preview = await s.site.allocations.previewAllocation(subscription.id, s.seats, { quantity: 4 });
        expect([preview.chargeInCents, preview.creditInCents]).toEqual([0, 0]);
        const result = await s.site.allocations.allocate(subscription.id, s.seats, { quantity: 4 });
        expect([result.line, result.payment, result.allocation.previousQuantity]).toEqual([null, null, 1]);
        await s.site.allocations.recordUsage(subscription.id, s.data, { quantity: 2 });
        expect(await s.site.subscriptions.transactions(subscription.id)).toEqual([]);
        expect(f.gateway.chargeCalls).toBe(0);
        const awaiting = await s.site.subscriptions.get(subscription.id);
        expect([awaiting.subscription.state, awaiting.balanceInCents]).toEqual(['awaiting_signup', 0]);
        // Its billing manifest (the direct post's `next_billing_manifest`) is the start; reading
        // it leaves the usage on the balance.
        const manifest = await f.storage.transaction(async (tx) => {
          const site = await tx.sites.findBySubdomain('acme');
          return nextBillingManifest(tx, site!, awaiting.subscription, f.clock.now());
        });
        expect([manifest.startDate, manifest.endDate, manifest.totalInCents]).toEqual([
          new Date(DELAYED_TO),
          new Date('2026-04-05T00:00:00Z'),
          5200,
        ]);

        await runTo(f, DELAYED_TO);
        // 10.00 + 4 seats + 2 GB of usage recorded while awaiting + the 5.00 setup fee.
        expect(await billedSince(s, subscription.id, DELAYED_TO)).toEqual([
          ['charge', 'baseline', 1000],
          ['charge', 'quantity_based_component', 3600],
          ['charge', 'metered_component', 100],
          ['charge', 'initial', 500],
        ]);
        expect(ledgerLines(await billedSince(s, subscription.id, DELAYED_TO))).toEqual(manifestLines(manifest));
        const started = await s.site.subscriptions.get(subscription.id);
        expect([started.subscription.state, started.balanceInCents]).toEqual(['active', 0]);
      });

      it('still refuses allocations on an ended subscription', async () => {
        const f = fixture();
        const s = await setup(f);
        const { subscription } = await s.site.subscriptions.create({
          productHandle: 'basic',
          customer: ADA,
          creditCard: VISA,
          initialBillingAt: DELAYED_TO,
        });
        await s.site.subscriptions.cancel(subscription.id);
        const error = await rejection(s.site.allocations.allocate(subscription.id, s.seats, { quantity: 1 }));
        expect([error.code, error.messages]).toEqual([
          'validation',
          ['This subscription is not eligible for allocation changes.'],
        ]);
      });
    });
  });
}
