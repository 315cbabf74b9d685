import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const CUSTOMER = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };

/** basic 10.00 / month, pro 30.00, a 14-day trial plan; seats 9.00 each, data 0.50 a GB, a 50% coupon. */
async function setup(f: EngineFixture) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const site = f.engine.site('acme');
  const family = await site.catalog.createFamily({ name: 'Plans' });
  for (const [handle, priceInCents] of [
    ['basic', 1000],
    ['pro', 3000],
  ] as const) {
    await site.catalog.createProduct(family.id, {
      name: handle,
      handle,
      priceInCents,
      interval: 1,
      intervalUnit: 'month',
    });
  }
  await site.catalog.createProduct(family.id, {
    name: 'Trial plan',
    handle: 'trial',
    priceInCents: 2000,
    interval: 1,
    intervalUnit: 'month',
    trialInterval: 14,
    trialIntervalUnit: 'day',
  });
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

/** A subscription to basic with two seats (28.00 a period), paid at signup. */
async function subscribe(s: Setup, extra: { couponCodes?: string[]; productHandle?: string } = {}) {
  const view = await s.site.subscriptions.create({
    productHandle: extra.productHandle ?? 'basic',
    customer: CUSTOMER,
    creditCard: VISA,
    components: [{ componentId: s.seats, allocatedQuantity: 2 }],
    ...(extra.couponCodes === undefined ? {} : { couponCodes: extra.couponCodes }),
  });
  return view.subscription.id;
}

/** Moves the clock to `at` and runs the due work. */
async function runTo(f: EngineFixture, at: string) {
  f.clock.set(at);
  return f.engine.runDue();
}

/** Billed lines (charges, credits, coupon adjustments) of period `index`: type, kind, amount. */
async function billedFor(s: Setup, id: number, index: number) {
  const lines = await s.site.subscriptions.transactions(id);
  return lines
    .filter((l) => l.periodIndex === index && (l.type !== 'adjustment' || l.kind === 'coupon'))
    .map((l) => [l.type, l.kind, l.amountInCents]);
}

/** Everything a refused command must leave as it was. */
async function trace(s: Setup, id: number) {
  const view = await s.site.subscriptions.get(id);
  return {
    version: view.subscription.version,
    data: view.subscription.data,
    balance: view.balanceInCents,
    lines: (await s.site.subscriptions.transactions(id)).length,
    invoices: (await s.site.invoices.list({ subscriptionId: id, perPage: 50 })).invoices.map((i) => [i.uid, i.status]),
  };
}

/** Advance invoices: the next period billed early; the renewal bills only the difference. */
export function advanceInvoiceSuite(harness: StorageHarness): void {
  describe(`advance invoices (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-01-15T12:00:00Z');

    it('issues the next period now, collects it at the renewal, and bills nothing twice', async () => {
      const f = fixture();
      const s = await setup(f);
      const id = await subscribe(s);
      const before = await s.site.subscriptions.get(id);
      expect(before.balanceInCents).toBe(0);
      const chargesBefore = f.gateway.chargeCalls;

      const invoice = await s.site.advanceInvoices.issue(id);
      expect(invoice.status).toBe('open');
      expect(invoice.role).toBe('renewal');
      expect(invoice.periodIndex).toBe(before.subscription.periodIndex + 1);
      expect(invoice.totalInCents).toBe(2800);
      expect(invoice.dueInCents).toBe(2800);
      expect(invoice.lineItems.map((i) => [i.kind, i.totalInCents])).toEqual([
        ['baseline', 1000],
        ['quantity_based_component', 1800],
      ]);
      expect(invoice.memo).toBe('Advance invoice for the period 2026-02-15 - 2026-03-15');
      // Not collected at issue: the balance owes it until the renewal collects it.
      expect(f.gateway.chargeCalls).toBe(chargesBefore);
      const issued = await s.site.subscriptions.get(id);
      expect(issued.balanceInCents).toBe(2800);
      expect(issued.subscription.data.advanceInvoice).toMatchObject({
        periodIndex: invoice.periodIndex,
        invoiceUid: invoice.uid,
      });
      expect((await s.site.advanceInvoices.read(id)).uid).toBe(invoice.uid);

      // Metered usage is billed in arrears at the renewal, never in advance.
      await s.site.allocations.recordUsage(id, s.data, { quantity: 10 });
      const summary = await runTo(f, '2026-02-15T12:00:00Z');
      expect(summary.renewed).toBe(1);
      const next = invoice.periodIndex!;
      expect(await billedFor(s, id, next)).toEqual([
        ['charge', 'baseline', 1000],
        ['charge', 'quantity_based_component', 1800],
        ['charge', 'metered_component', 500],
      ]);
      // One charge of the whole balance: the advance invoice and the usage.
      expect(f.gateway.chargeCalls).toBe(chargesBefore + 1);
      const renewed = await s.site.subscriptions.get(id);
      expect(renewed.balanceInCents).toBe(0);
      expect(renewed.subscription.periodIndex).toBe(next);
      expect(renewed.subscription.data.advanceInvoice).toBeUndefined();
      expect((await s.site.invoices.get(invoice.uid)).status).toBe('paid');
      expect((await rejection(s.site.advanceInvoices.read(id))).code).toBe('not_found');

      // The period after is billed in full again.
      await runTo(f, '2026-03-15T12:00:00Z');
      expect(await billedFor(s, id, next + 1)).toEqual([
        ['charge', 'baseline', 1000],
        ['charge', 'quantity_based_component', 1800],
      ]);
    });

    it('bills a quantity raised between the issue and the renewal as the difference', async () => {
      const f = fixture();
      const s = await setup(f);
      const id = await subscribe(s);
      const invoice = await s.site.advanceInvoices.issue(id);
      await s.site.allocations.allocate(id, s.seats, { quantity: 5 });
      await runTo(f, '2026-02-15T12:00:00Z');
      const lines = await billedFor(s, id, invoice.periodIndex!);
      // The advance invoice's 2 seats, then 3 more seats at the renewal: 5 seats billed once.
      expect(lines).toEqual([
        ['charge', 'baseline', 1000],
        ['charge', 'quantity_based_component', 1800],
        ['charge', 'quantity_based_component', 2700],
      ]);
      expect((await s.site.subscriptions.get(id)).balanceInCents).toBe(0);
    });

    it('credits a lowered quantity and its coupon difference, counting the coupon use once', async () => {
      const f = fixture();
      const s = await setup(f);
      const id = await subscribe(s, { couponCodes: ['HALF'] });
      const uses = (await s.site.subscriptions.get(id)).subscription.data.couponUses as Record<string, number>;
      const invoice = await s.site.advanceInvoices.issue(id);
      expect(invoice.totalInCents).toBe(1400);
      expect(invoice.discountInCents).toBe(1400);
      // The issue does not count a use: the renewal does.
      expect((await s.site.subscriptions.get(id)).subscription.data.couponUses).toEqual(uses);
      await s.site.allocations.allocate(id, s.seats, { quantity: 1 });
      await runTo(f, '2026-02-15T12:00:00Z');
      const lines = await billedFor(s, id, invoice.periodIndex!);
      expect(lines).toEqual([
        ['charge', 'baseline', 1000],
        ['charge', 'quantity_based_component', 1800],
        ['adjustment', 'coupon', -1400],
        ['credit', 'quantity_based_component', -900],
        ['adjustment', 'coupon', 450],
      ]);
      // 10.00 + 9.00 less half: 9.50 for the period.
      expect(lines.reduce((sum, l) => sum + (l[2] as number), 0)).toBe(950);
      const after = (await s.site.subscriptions.get(id)).subscription.data.couponUses as Record<string, number>;
      expect(after.HALF).toBe((uses.HALF ?? 0) + 1);
    });

    it('voids the advance invoice: reversed on the ledger, and the renewal bills the full period', async () => {
      const f = fixture();
      const s = await setup(f);
      const id = await subscribe(s);
      const invoice = await s.site.advanceInvoices.issue(id);
      const blank = await rejection(s.site.advanceInvoices.void(id, ' '));
      expect(blank.message).toContain('Reason: cannot be blank.');
      const voided = await s.site.advanceInvoices.void(id, 'Customer asked');
      expect(voided.uid).toBe(invoice.uid);
      expect(voided.status).toBe('voided');
      const view = await s.site.subscriptions.get(id);
      expect(view.balanceInCents).toBe(0);
      expect(view.subscription.data.advanceInvoice).toBeUndefined();
      expect((await rejection(s.site.advanceInvoices.read(id))).code).toBe('not_found');
      expect((await rejection(s.site.advanceInvoices.void(id, 'again'))).code).toBe('not_found');
      // Reopened, it would bill the period a second time at the renewal.
      const reopen = await rejection(s.site.invoices.reopen(invoice.uid));
      expect(reopen.message).toContain('a voided advance invoice cannot be reopened');
      expect((await s.site.invoices.get(invoice.uid)).status).toBe('voided');
      const charged = f.gateway.chargeCalls;
      await runTo(f, '2026-02-15T12:00:00Z');
      const lines = await s.site.subscriptions.transactions(id);
      const renewal = lines.filter((l) => l.createdAt.toISOString() === '2026-02-15T12:00:00.000Z');
      expect(renewal.map((l) => [l.type, l.kind, l.amountInCents])).toEqual([
        ['charge', 'baseline', 1000],
        ['charge', 'quantity_based_component', 1800],
        ['payment', null, 2800],
      ]);
      expect(f.gateway.chargeCalls).toBe(charged + 1);
      expect((await s.site.subscriptions.get(id)).balanceInCents).toBe(0);
    });

    it("counts an advance invoice voided through the invoice's own void as none", async () => {
      const f = fixture();
      const s = await setup(f);
      const id = await subscribe(s);
      const invoice = await s.site.advanceInvoices.issue(id);
      await s.site.invoices.void(invoice.uid, 'Wrong');
      expect((await rejection(s.site.advanceInvoices.read(id))).code).toBe('not_found');
      // A new one may be issued without force.
      const again = await s.site.advanceInvoices.issue(id);
      expect(again.uid).not.toBe(invoice.uid);
      await runTo(f, '2026-02-15T12:00:00Z');
      expect(await billedFor(s, id, again.periodIndex!)).toEqual([
        ['charge', 'baseline', 1000],
        ['charge', 'quantity_based_component', 1800],
        ['charge', 'baseline', 1000],
        ['charge', 'quantity_based_component', 1800],
      ]);
      // The first invoice's lines were reversed: the period is paid for once.
      expect((await s.site.subscriptions.get(id)).balanceInCents).toBe(0);
      expect((await s.site.invoices.get(again.uid)).status).toBe('paid');
      expect(f.gateway.charges.size).toBe(2);
      expect([...f.gateway.charges.values()].map((c) => c.amountInCents)).toEqual([2800, 2800]);
    });

    it('refuses a second advance invoice for the period unless forced, which voids the first', async () => {
      const f = fixture();
      const s = await setup(f);
      const id = await subscribe(s);
      const first = await s.site.advanceInvoices.issue(id);
      const before = await trace(s, id);
      const refused = await rejection(s.site.advanceInvoices.issue(id));
      expect(refused.code).toBe('validation');
      expect(refused.message).toContain('an advance invoice already exists for the next billing period');
      expect(await rejection(s.site.advanceInvoices.issue(id, { force: false }))).toMatchObject({ code: 'validation' });
      expect(await trace(s, id)).toEqual(before);

      // Accrued, not collected: a collection now would pay the oldest open invoice, the advance one.
      await s.site.allocations.allocate(id, s.seats, { quantity: 3, accrueCharge: true });
      const second = await s.site.advanceInvoices.issue(id, { force: true });
      expect(second.uid).not.toBe(first.uid);
      expect(second.totalInCents).toBe(1000 + 2700);
      expect((await s.site.invoices.get(first.uid)).status).toBe('voided');
      expect((await s.site.advanceInvoices.read(id)).uid).toBe(second.uid);
      await runTo(f, '2026-02-15T12:00:00Z');
      // Nothing more at the renewal: the second invoice billed the period as it is.
      const renewal = (await s.site.subscriptions.transactions(id)).filter(
        (l) => l.createdAt.toISOString() === '2026-02-15T12:00:00.000Z',
      );
      // The second invoice and the accrued prorated seat (9.00 for the rest of the period).
      expect(renewal.map((l) => [l.type, l.amountInCents])).toEqual([['payment', 3700 + 900]]);
      expect((await s.site.invoices.get(second.uid)).status).toBe('paid');
      expect((await s.site.subscriptions.get(id)).balanceInCents).toBe(0);
    });

    it('refuses a paid advance invoice being voided or replaced', async () => {
      const f = fixture();
      const s = await setup(f);
      const id = await subscribe(s);
      const invoice = await s.site.advanceInvoices.issue(id);
      await s.site.invoices.recordPayment(invoice.uid, { amountInCents: 2800, method: 'external' });
      const before = await trace(s, id);
      const voiding = await rejection(s.site.advanceInvoices.void(id, 'No'));
      expect(voiding.code).toBe('validation');
      expect(voiding.message).toContain('a paid invoice cannot be voided');
      const forcing = await rejection(s.site.advanceInvoices.issue(id, { force: true }));
      expect(forcing.message).toContain('a paid advance invoice cannot be replaced');
      expect(await trace(s, id)).toEqual(before);
      // The renewal bills nothing more and charges nothing: the period was paid in advance.
      const charged = f.gateway.chargeCalls;
      await runTo(f, '2026-02-15T12:00:00Z');
      expect(f.gateway.chargeCalls).toBe(charged);
      expect((await s.site.subscriptions.get(id)).balanceInCents).toBe(0);
    });

    it('refuses subscriptions with no next period to bill, and a force that is not a boolean', async () => {
      const f = fixture();
      const s = await setup(f);
      const trial = (
        await s.site.subscriptions.create({ productHandle: 'trial', customer: CUSTOMER, creditCard: VISA })
      ).subscription.id;
      expect((await rejection(s.site.advanceInvoices.issue(trial))).message).toContain('on trial');

      const canceling = await subscribe(s);
      await s.site.subscriptions.cancel(canceling, { cancelAtEndOfPeriod: true });
      expect((await rejection(s.site.advanceInvoices.issue(canceling))).message).toContain(
        'canceled at the end of its period',
      );

      const canceled = await subscribe(s);
      await s.site.subscriptions.cancel(canceled);
      const before = await trace(s, canceled);
      const refused = await rejection(s.site.advanceInvoices.issue(canceled));
      expect(refused.code).toBe('validation');
      expect(refused.message).toContain('cannot be issued for a cancelled subscription');
      expect(await trace(s, canceled)).toEqual(before);

      const live = await subscribe(s);
      const bad = await rejection(s.site.advanceInvoices.issue(live, { force: 'yes' as unknown as boolean }));
      expect(bad.message).toContain('Force: must be true or false.');
      expect((await rejection(s.site.advanceInvoices.issue(999_999))).code).toBe('not_found');
      expect((await rejection(s.site.advanceInvoices.read(live))).code).toBe('not_found');
    });

    it('issues exactly one advance invoice when two issues race', async () => {
      const f = fixture();
      const s = await setup(f);
      const id = await subscribe(s);
      const results = await Promise.allSettled([s.site.advanceInvoices.issue(id), s.site.advanceInvoices.issue(id)]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(['validation', 'conflict']).toContain(failed.reason.code);
      const { invoices } = await s.site.invoices.list({ subscriptionId: id, perPage: 50 });
      // The signup's invoice and one advance invoice.
      expect(invoices).toHaveLength(2);
      expect((await s.site.subscriptions.get(id)).balanceInCents).toBe(2800);
    });

    it('voids an open advance invoice when the subscription is canceled', async () => {
      const f = fixture();
      const s = await setup(f);
      const id = await subscribe(s);
      const invoice = await s.site.advanceInvoices.issue(id);
      await s.site.subscriptions.cancel(id);
      expect((await s.site.invoices.get(invoice.uid)).status).toBe('voided');
      expect((await s.site.subscriptions.get(id)).balanceInCents).toBe(0);
    });

    it('voids an open advance invoice when a delayed cancellation ends the subscription at the renewal', async () => {
      const f = fixture();
      const s = await setup(f);
      const id = await subscribe(s);
      const invoice = await s.site.advanceInvoices.issue(id);
      await s.site.subscriptions.cancel(id, { cancelAtEndOfPeriod: true });
      await runTo(f, '2026-02-15T12:00:00Z');
      expect((await s.site.subscriptions.get(id)).subscription.state).toBe('cancelled');
      expect((await s.site.invoices.get(invoice.uid)).status).toBe('voided');
      expect((await s.site.subscriptions.get(id)).balanceInCents).toBe(0);
    });

    it('refuses a migration that starts a new period; one keeping the period is billed as a difference', async () => {
      const f = fixture();
      const s = await setup(f);
      const id = await subscribe(s);
      const invoice = await s.site.advanceInvoices.issue(id);
      const before = await trace(s, id);
      const refused = await rejection(s.site.subscriptions.migrate(id, { productHandle: 'pro' }));
      expect(refused.message).toContain('its next period has an advance invoice');
      expect(await trace(s, id)).toEqual(before);

      f.clock.set('2026-01-30T12:00:00Z');
      await s.site.subscriptions.migrate(id, { productHandle: 'pro', preservePeriod: true });
      await runTo(f, '2026-02-15T12:00:00Z');
      expect(await billedFor(s, id, invoice.periodIndex!)).toEqual([
        ['charge', 'baseline', 1000],
        ['charge', 'quantity_based_component', 1800],
        ['charge', 'baseline', 2000],
      ]);
      expect((await s.site.subscriptions.get(id)).balanceInCents).toBe(0);

      // A migration in the period the advance invoice billed credits its unused time from the
      // period's start: half of pro's 30.00 and the seats' 18.00 at the midpoint.
      const mid = '2026-03-01T12:00:00Z';
      f.clock.set(mid);
      const preview = await s.site.subscriptions.previewMigration(id, { productHandle: 'basic', preservePeriod: true });
      expect(preview.proratedAdjustmentInCents).toBe(-2400);
    });
  });
}
