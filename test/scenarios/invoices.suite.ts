import {
  type BillingEngine,
  type BillingEvent,
  createBillingEngine,
  createTestGateway,
  ManualClock,
  type Storage,
  type TestGateway,
} from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { checkInvoiceInvariants } from '../invoices/invariants.js';
import { rejection } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

interface Fixture {
  engine: BillingEngine;
  clock: ManualClock;
  gateway: TestGateway;
  storage: Storage;
  siteId: number;
  seats: number;
  events: BillingEvent[];
}

/** Invoices, credit notes and statements on every adapter (issue #17). */
export function invoiceScenarios(harness: StorageHarness): void {
  describe(`invoices (${harness.name})`, () => {
    const open: Storage[] = [];
    afterEach(async () => {
      for (const storage of open.splice(0)) await (harness.destroy ? harness.destroy(storage) : storage.close());
    });

    async function fixture(): Promise<Fixture> {
      const storage = await harness.create();
      open.push(storage);
      const clock = new ManualClock('2026-01-01T12:00:00Z');
      const gateway = createTestGateway();
      const engine = createBillingEngine({ storage, clock, gateway });
      const { site } = await engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'America/New_York' });
      // The numbering prefix and net terms are site settings (no API for them yet).
      await storage.transaction((tx) =>
        tx.sites.updateAtVersion(site.id, site.version, {
          settings: { ...site.settings, invoices: { prefix: 'INV-', netTermsDays: 0 } },
        }),
      );
      const acme = engine.site('acme');
      const family = await acme.catalog.createFamily({ name: 'Plans' });
      for (const [handle, price] of [
        ['a', 1000],
        ['b', 2500],
      ] as const) {
        await acme.catalog.createProduct(family.id, {
          name: handle.toUpperCase(),
          handle,
          priceInCents: price,
          interval: 1,
          intervalUnit: 'month',
        });
      }
      await acme.catalog.createProduct(family.id, {
        name: 'Trial plan',
        handle: 't',
        priceInCents: 1500,
        interval: 1,
        intervalUnit: 'month',
        trialInterval: 14,
        trialIntervalUnit: 'day',
        trialPriceInCents: 0,
      });
      await acme.coupons.create({
        name: 'Half',
        code: 'HALF',
        percentage: '50',
        recurring: true,
        productFamilyId: family.id,
      });
      const seats = await acme.components.create(family.id, {
        kind: 'quantity_based_component',
        name: 'Seats',
        handle: 'seats',
        unitName: 'seat',
        pricingScheme: 'per_unit',
        unitPrice: '2.00',
      });
      const events: BillingEvent[] = [];
      engine.on('*', (event) => events.push(event));
      return { engine, clock, gateway, storage, siteId: site.id, seats: seats.component.id, events };
    }

    const customer = (n: number) => ({ firstName: `C${n}`, lastName: 'Doe', email: `c${n}@example.com` });

    it('a year of clock-driven billing keeps invoices equal to the ledger, numbered without gaps', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const trial = await acme.subscriptions.create({ productHandle: 't', customer: customer(1), creditCard: VISA });
      const coupon = await acme.subscriptions.create({
        productHandle: 'a',
        customer: customer(2),
        creditCard: VISA,
        couponCode: 'HALF',
        components: [{ componentId: f.seats, allocatedQuantity: 5 }],
      });
      const plain = await acme.subscriptions.create({ productHandle: 'a', customer: customer(3), creditCard: VISA });
      const first = (await acme.invoices.list({ subscriptionId: coupon.subscription.id })).invoices;
      expect(first).toHaveLength(1);
      // 10.00 + 5 seats x 2.00, half off: one invoice, paid by the signup payment.
      expect(first[0]).toMatchObject({ status: 'paid', role: 'signup', subtotalInCents: 2000, discountInCents: 1000 });
      expect(first[0]!.totalInCents).toBe(1000);
      expect(first[0]!.number).toMatch(/^INV-\d+$/);
      expect(first[0]!.issueDate).toBe('2026-01-01');
      await checkInvoiceInvariants(f.storage, f.siteId);

      const advance = async (iso: string) => {
        f.clock.set(iso);
        const summary = await f.engine.runDue();
        expect(summary.errors).toBe(0);
        await checkInvoiceInvariants(f.storage, f.siteId);
      };
      await advance('2026-01-11T12:00:00Z');
      // A migration mid-period: the prorated credit and the new charge on one invoice.
      await acme.subscriptions.migrate(plain.subscription.id, { productHandle: 'b', preservePeriod: true });
      const migration = (await acme.invoices.list({ subscriptionId: plain.subscription.id, direction: 'desc' }))
        .invoices[0]!;
      expect(migration.role).toBe('migration');
      expect(migration.lineItems.some((item) => item.totalInCents < 0)).toBe(true);
      expect(migration.status).toBe('paid');
      await checkInvoiceInvariants(f.storage, f.siteId);

      // Allocations up and down: a prorated charge, then a prorated credit.
      await acme.allocations.allocate(coupon.subscription.id, f.seats, { quantity: 8 });
      await advance('2026-01-20T12:00:00Z');
      await acme.allocations.allocate(coupon.subscription.id, f.seats, { quantity: 6 });
      await checkInvoiceInvariants(f.storage, f.siteId);

      // Renewals month by month; March's renewal of the plain subscription is declined once.
      for (const month of ['02', '03', '04', '05', '06', '07', '08', '09', '10', '11', '12']) {
        if (month === '03')
          f.gateway.injectFailure({ outcome: 'declined', keyPrefix: `renewal:${plain.subscription.id}:`, times: 1 });
        await advance(`2026-${month}-01T18:00:00Z`);
        if (month === '03') {
          const openOnes = (await acme.invoices.list({ subscriptionId: plain.subscription.id, status: 'open' }))
            .invoices;
          expect(openOnes).toHaveLength(1);
          expect(openOnes[0]!.dueInCents).toBe(2500);
          // The dunning retry a day later pays that invoice: no second invoice for the period.
          const before = (await acme.invoices.list({ subscriptionId: plain.subscription.id })).total;
          await advance('2026-03-02T19:00:00Z');
          const after = await acme.invoices.list({ subscriptionId: plain.subscription.id });
          expect(after.total).toBe(before);
          const paid = await acme.invoices.get(openOnes[0]!.uid);
          expect(paid.status).toBe('paid');
          expect(paid.paidDate).toBe('2026-03-02');
          expect(paid.payments).toHaveLength(1);
        }
        if (month === '06') {
          // A one-time charge, a manual credit and an external payment on an open ad-hoc invoice.
          await acme.ledger.charge(trial.subscription.id, { amountInCents: 700, memo: 'Setup help' });
          const adhoc = await acme.invoices.createAdhoc(trial.subscription.id, {
            lineItems: [{ title: 'Consulting', quantity: '2', unitPriceInCents: 1200 }],
          });
          expect(adhoc).toMatchObject({ status: 'open', role: 'adhoc', totalInCents: 2400, dueInCents: 2400 });
          await acme.ledger.credit(trial.subscription.id, { amountInCents: 400, memo: 'Goodwill' });
          const credited = await acme.invoices.get(adhoc.uid);
          expect(credited).toMatchObject({ creditInCents: 400, dueInCents: 2000 });
          const paid = await acme.invoices.recordPayment(adhoc.uid, { amountInCents: 2000, memo: 'Wire' });
          expect(paid).toMatchObject({ status: 'paid', paidInCents: 2000, dueInCents: 0 });
          await checkInvoiceInvariants(f.storage, f.siteId);
        }
        if (month === '08') {
          // A partial refund of the coupon subscription's August invoice issues a credit note.
          const august = (await acme.invoices.list({ subscriptionId: coupon.subscription.id, direction: 'desc' }))
            .invoices[0]!;
          expect(august.status).toBe('paid');
          const { invoice, creditNote } = await acme.invoices.refund(august.uid, {
            amountInCents: 300,
            memo: 'Outage',
          });
          expect(creditNote).toMatchObject({ invoiceUid: august.uid, totalInCents: 300, number: 'INV-CN-1' });
          expect(invoice.refundInCents).toBe(300);
          const over = await rejection(
            acme.invoices.refund(august.uid, { amountInCents: august.paidInCents, memo: 'Too much' }),
          );
          expect(over.code).toBe('validation');
          expect((await acme.invoices.listCreditNotes()).total).toBe(1);
          await checkInvoiceInvariants(f.storage, f.siteId);
        }
      }
      const report = await checkInvoiceInvariants(f.storage, f.siteId);
      // The trial bills nothing at signup, then Jan 15 .. Nov 15 (11); the others a signup and
      // Feb .. Dec (12 each); a migration, two allocations, a one-time charge and an ad-hoc invoice.
      expect(report.invoices).toBe(11 + 12 + 12 + 1 + 2 + 1 + 1);
      expect(report.creditNotes).toBe(1);
      const issued = f.events.filter((e) => e.key === 'invoice_issued');
      expect(issued).toHaveLength(report.invoices);
      expect(f.events.filter((e) => e.key === 'credit_note_created')).toHaveLength(1);

      // Statements: one per period, each closing where the next opens.
      const statements = await acme.invoices.statements(coupon.subscription.id);
      const view = await acme.subscriptions.get(coupon.subscription.id);
      expect(statements).toHaveLength(view.subscription.periodIndex + 1);
      for (const [k, s] of statements.entries()) {
        expect(s.closingBalanceInCents).toBe(
          s.openingBalanceInCents + s.totalChargesInCents - s.totalCreditsInCents - s.totalPaymentsInCents,
        );
        if (k > 0) expect(s.openingBalanceInCents).toBe(statements[k - 1]!.closingBalanceInCents);
      }
      expect(statements.at(-1)!.closingBalanceInCents).toBe(view.balanceInCents);
      expect(await acme.invoices.statement(statements[1]!.id)).toEqual(statements[1]);
    });

    it('voids an open invoice by reversing its lines, and reopens it', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const sub = await acme.subscriptions.create({ productHandle: 'a', customer: customer(1), creditCard: VISA });
      const adhoc = await acme.invoices.createAdhoc(sub.subscription.id, {
        lineItems: [{ title: 'Install', unitPriceInCents: 5000 }],
      });
      const voided = await acme.invoices.void(adhoc.uid, 'Billed by mistake');
      expect(voided).toMatchObject({ status: 'voided', dueInCents: 0 });
      expect((await acme.subscriptions.get(sub.subscription.id)).balanceInCents).toBe(0);
      const lines = await acme.subscriptions.transactions(sub.subscription.id);
      expect(lines.filter((l) => l.kind === 'invoice_void').map((l) => l.amountInCents)).toEqual([-5000]);
      expect(f.events.filter((e) => e.key === 'invoice_voided')).toHaveLength(1);
      const again = await rejection(acme.invoices.void(adhoc.uid, 'twice'));
      expect(again.code).toBe('validation');
      const reopened = await acme.invoices.reopen(adhoc.uid);
      expect(reopened).toMatchObject({ status: 'open', dueInCents: 5000 });
      expect((await acme.subscriptions.get(sub.subscription.id)).balanceInCents).toBe(5000);
      expect((await acme.invoices.events(adhoc.uid)).map((e) => e.eventType)).toEqual([
        'issue_invoice',
        'void_invoice',
        'change_invoice_status',
      ]);
      // A paid invoice cannot be voided; a payment beyond the due is refused and changes nothing.
      const signupInvoice = (await acme.invoices.list({ subscriptionId: sub.subscription.id, direction: 'asc' }))
        .invoices[0]!;
      expect((await rejection(acme.invoices.void(signupInvoice.uid, 'no'))).code).toBe('validation');
      const tooMuch = await rejection(acme.invoices.recordPayment(adhoc.uid, { amountInCents: 5001 }));
      expect(tooMuch.code).toBe('validation');
      expect((await acme.invoices.get(adhoc.uid)).paidInCents).toBe(0);
      expect((await rejection(acme.invoices.get('inv_missing'))).code).toBe('not_found');
      await checkInvoiceInvariants(f.storage, f.siteId);
    });

    it('lists with filters, paging and direction', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const a = await acme.subscriptions.create({ productHandle: 'a', customer: customer(1), creditCard: VISA });
      f.clock.set('2026-01-05T12:00:00Z');
      const b = await acme.subscriptions.create({ productHandle: 'b', customer: customer(2), creditCard: VISA });
      await acme.invoices.createAdhoc(b.subscription.id, { lineItems: [{ title: 'Extra', unitPriceInCents: 100 }] });
      const all = await acme.invoices.list({ direction: 'asc' });
      expect(all.invoices.map((i) => i.number)).toEqual(['INV-1', 'INV-2', 'INV-3']);
      expect((await acme.invoices.list()).invoices.map((i) => i.number)).toEqual(['INV-3', 'INV-2', 'INV-1']);
      expect(
        (await acme.invoices.list({ perPage: 2, page: 2, direction: 'asc' })).invoices.map((i) => i.number),
      ).toEqual(['INV-3']);
      expect((await acme.invoices.list({ status: 'open' })).invoices.map((i) => i.number)).toEqual(['INV-3']);
      expect((await acme.invoices.list({ subscriptionId: a.subscription.id })).total).toBe(1);
      expect((await acme.invoices.list({ number: 'INV-2' })).invoices[0]!.subscriptionId).toBe(b.subscription.id);
      const fifth = await acme.invoices.list({ startDate: '2026-01-05', endDate: '2026-01-05' });
      expect(fifth.total).toBe(2);
      const created = await acme.invoices.list({ dateField: 'created_at', endDate: '2026-01-04' });
      expect(created.invoices.map((i) => i.number)).toEqual(['INV-1']);
      expect((await rejection(acme.invoices.list({ startDate: '2026-13-01' }))).code).toBe('validation');
    });
  });
}
