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
      // The numbering prefix and net terms are site settings.
      await engine.sites.update('acme', { settings: { invoices: { prefix: 'INV-', netTermsDays: 0 } } });
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

    it('keeps a draft ad-hoc invoice off the ledger and unnumbered until it is issued', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const sub = await acme.subscriptions.create({ productHandle: 'a', customer: customer(1), creditCard: VISA });
      const linesBefore = await acme.subscriptions.transactions(sub.subscription.id);
      const draft = await acme.invoices.createAdhoc(sub.subscription.id, {
        lineItems: [
          { title: 'Audit', description: 'Two days on site', quantity: '2', unitPriceInCents: 3000 },
          { title: 'Travel', unitPriceInCents: 1500 },
        ],
        memo: 'Q1 audit',
        netTerms: 14,
        status: 'draft',
      });
      expect(draft).toMatchObject({
        status: 'draft',
        number: null,
        sequenceNumber: null,
        role: 'adhoc',
        totalInCents: 7500,
        dueInCents: 7500,
        issueDate: '2026-01-01',
        dueDate: '2026-01-15',
      });
      expect(draft.lineItems.map((i) => i.transactionId)).toEqual([null, null]);
      // Nothing on the ledger, no event, no number taken: the next invoice takes INV-2.
      expect(await acme.subscriptions.transactions(sub.subscription.id)).toEqual(linesBefore);
      expect((await acme.subscriptions.get(sub.subscription.id)).balanceInCents).toBe(0);
      expect(f.events.filter((e) => e.key === 'invoice_issued')).toHaveLength(1);
      expect((await acme.invoices.list({ status: 'draft' })).invoices.map((i) => i.uid)).toEqual([draft.uid]);
      // Drafts list after the issued invoices (asc), first when newest first.
      expect((await acme.invoices.list({ direction: 'asc' })).invoices.map((i) => i.number)).toEqual(['INV-1', null]);
      expect((await acme.invoices.list()).invoices.map((i) => i.number)).toEqual([null, 'INV-1']);
      // A draft takes no payment and cannot be reopened; an open invoice cannot be issued.
      expect((await rejection(acme.invoices.recordPayment(draft.uid, { amountInCents: 100 }))).code).toBe('validation');
      const signupInvoice = (await acme.invoices.list({ status: 'paid' })).invoices[0]!;
      expect((await rejection(acme.invoices.issue(signupInvoice.uid))).code).toBe('validation');
      await checkInvoiceInvariants(f.storage, f.siteId);

      // A manual credit meanwhile (not invoiced); the draft, issued later, takes INV-2 and the credit.
      f.clock.set('2026-01-03T12:00:00Z');
      await acme.ledger.credit(sub.subscription.id, { amountInCents: 500, memo: 'Goodwill' });
      f.clock.set('2026-01-05T12:00:00Z');
      const issued = await acme.invoices.issue(draft.uid);
      expect(issued).toMatchObject({
        uid: draft.uid,
        status: 'open',
        number: 'INV-2',
        sequenceNumber: 2,
        memo: 'Q1 audit',
        issueDate: '2026-01-05',
        dueDate: '2026-01-19',
        totalInCents: 7500,
        creditInCents: 500,
        dueInCents: 7000,
      });
      expect(issued.lineItems.map((i) => [i.title, i.description, i.quantity, i.unitPriceInCents])).toEqual([
        ['Audit', 'Two days on site', '2', 3000],
        ['Travel', 'adhoc', '1', 1500],
      ]);
      const lines = await acme.subscriptions.transactions(sub.subscription.id);
      const adhocLines = lines.filter((l) => l.kind === 'adhoc');
      expect(adhocLines.map((l) => [l.type, l.amountInCents])).toEqual([
        ['charge', 6000],
        ['charge', 1500],
      ]);
      expect(issued.lineItems.map((i) => i.transactionId)).toEqual(adhocLines.map((l) => l.id));
      expect((await acme.subscriptions.get(sub.subscription.id)).balanceInCents).toBe(7000);
      expect(f.events.filter((e) => e.key === 'invoice_issued')).toHaveLength(2);
      expect((await acme.invoices.events(draft.uid)).map((e) => e.eventType)).toEqual([
        'change_invoice_status',
        'issue_invoice',
        'apply_payment',
      ]);
      // Issued once: again is refused and posts nothing.
      expect((await rejection(acme.invoices.issue(draft.uid))).code).toBe('validation');
      expect(await acme.subscriptions.transactions(sub.subscription.id)).toHaveLength(lines.length);
      await checkInvoiceInvariants(f.storage, f.siteId);

      // Another draft is voided, a third deleted: neither touches the ledger nor takes a number.
      const toVoid = await acme.invoices.createAdhoc(sub.subscription.id, {
        lineItems: [{ title: 'Oops', unitPriceInCents: 900 }],
        status: 'draft',
      });
      const toDelete = await acme.invoices.createAdhoc(sub.subscription.id, {
        lineItems: [{ title: 'Never', unitPriceInCents: 800 }],
        status: 'draft',
      });
      const voided = await acme.invoices.void(toVoid.uid, 'Not needed');
      expect(voided).toMatchObject({ status: 'voided', number: null, dueInCents: 0 });
      expect((await rejection(acme.invoices.reopen(toVoid.uid))).code).toBe('validation');
      expect((await rejection(acme.invoices.issue(toVoid.uid))).code).toBe('validation');
      await acme.invoices.deleteDraft(toDelete.uid);
      expect((await rejection(acme.invoices.get(toDelete.uid))).code).toBe('not_found');
      expect((await rejection(acme.invoices.deleteDraft(issued.uid))).code).toBe('validation');
      expect(await acme.subscriptions.transactions(sub.subscription.id)).toHaveLength(lines.length);
      expect(f.events.filter((e) => e.key === 'invoice_voided')).toHaveLength(0);
      const next = await acme.invoices.createAdhoc(sub.subscription.id, {
        lineItems: [{ title: 'Next', unitPriceInCents: 100 }],
      });
      expect(next.number).toBe('INV-3');
      await checkInvoiceInvariants(f.storage, f.siteId);
    });

    it('numbers and dates the next invoices with the site prefix and net terms, never renumbering old ones', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const sub = await acme.subscriptions.create({ productHandle: 'a', customer: customer(1), creditCard: VISA });
      const draft = await acme.invoices.createAdhoc(sub.subscription.id, {
        lineItems: [{ title: 'Later', unitPriceInCents: 100 }],
        status: 'draft',
      });
      const first = (await acme.invoices.list({ status: 'paid' })).invoices[0]!;
      expect(first).toMatchObject({ number: 'INV-1', issueDate: '2026-01-01', dueDate: '2026-01-01' });

      const updated = await f.engine.sites.update('acme', {
        settings: { invoices: { prefix: 'ACME_2026-', netTermsDays: 30 } },
      });
      expect(updated.settings.invoices).toEqual({ prefix: 'ACME_2026-', netTermsDays: 30 });
      // Another setting alone keeps the invoice settings.
      const other = await f.engine.sites.update('acme', { settings: { referralsEnabled: true } });
      expect(other.settings.invoices).toEqual({ prefix: 'ACME_2026-', netTermsDays: 30 });
      // One field alone keeps the other.
      expect(
        (await f.engine.sites.update('acme', { settings: { invoices: { netTermsDays: 15 } } })).settings.invoices,
      ).toEqual({ prefix: 'ACME_2026-', netTermsDays: 15 });

      f.clock.set('2026-01-10T12:00:00Z');
      const next = await acme.invoices.createAdhoc(sub.subscription.id, {
        lineItems: [{ title: 'Extra', unitPriceInCents: 500 }],
      });
      expect(next).toMatchObject({
        number: 'ACME_2026-2',
        sequenceNumber: 2,
        issueDate: '2026-01-10',
        dueDate: '2026-01-25',
      });
      // An ad-hoc invoice's own net terms still win over the site's.
      const own = await acme.invoices.createAdhoc(sub.subscription.id, {
        lineItems: [{ title: 'Own terms', unitPriceInCents: 500 }],
        netTerms: 3,
      });
      expect(own).toMatchObject({ number: 'ACME_2026-3', dueDate: '2026-01-13' });
      // The draft made before the change keeps its terms (due on issue) and takes the new prefix when issued.
      const issued = await acme.invoices.issue(draft.uid);
      expect(issued).toMatchObject({ number: 'ACME_2026-4', issueDate: '2026-01-10', dueDate: '2026-01-10' });
      // A renewal after the change: the new prefix and terms; the old invoices keep theirs.
      await f.engine.sites.update('acme', { settings: { invoices: { prefix: '', netTermsDays: 0 } } });
      f.clock.set('2026-02-01T18:00:00Z');
      expect((await f.engine.runDue()).errors).toBe(0);
      const all = (await acme.invoices.list({ direction: 'asc' })).invoices;
      expect(all.map((i) => [i.number, i.issueDate, i.dueDate])).toEqual([
        ['INV-1', '2026-01-01', '2026-01-01'],
        ['ACME_2026-2', '2026-01-10', '2026-01-25'],
        ['ACME_2026-3', '2026-01-10', '2026-01-13'],
        ['ACME_2026-4', '2026-01-10', '2026-01-10'],
        ['5', '2026-02-01', '2026-02-01'],
      ]);
      expect(await acme.invoices.get(first.uid)).toEqual(first);
      await checkInvoiceInvariants(f.storage, f.siteId);

      // Bad settings are refused, every problem at once, and change nothing.
      for (const invoices of [
        { prefix: 'INV 1' },
        { prefix: 'A'.repeat(17) },
        { prefix: 'FACTURE-№' },
        { netTermsDays: -1 },
        { netTermsDays: 366 },
        { netTermsDays: 1.5 },
        { prefix: 7 as unknown as string },
      ]) {
        const refused = await rejection(f.engine.sites.update('acme', { settings: { invoices } }));
        expect(refused.code, JSON.stringify(invoices)).toBe('validation');
      }
      const both = await rejection(
        f.engine.sites.update('acme', { settings: { invoices: { prefix: '#', netTermsDays: 400 } } }),
      );
      expect(both.message).toContain('Invoice prefix');
      expect(both.message).toContain('Invoice net terms');
      const site = await f.storage.transaction((tx) => tx.sites.findById(f.siteId));
      expect(site?.settings.invoices).toEqual({ prefix: '', netTermsDays: 0 });
      // At creation too; 16 characters and 365 days are accepted.
      expect(
        (
          await rejection(
            f.engine.sites.create({ subdomain: 'bad', currency: 'USD', settings: { invoices: { prefix: '?' } } }),
          )
        ).code,
      ).toBe('validation');
      const created = await f.engine.sites.create({
        subdomain: 'good',
        currency: 'USD',
        settings: { invoices: { prefix: 'A'.repeat(16), netTermsDays: 365 } },
      });
      expect(created.site.settings.invoices).toEqual({ prefix: 'A'.repeat(16), netTermsDays: 365 });
    });

    it('pays an open invoice with the subscription card through the collection path', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const sub = await acme.subscriptions.create({ productHandle: 'a', customer: customer(1), creditCard: VISA });
      const id = sub.subscription.id;
      const adhoc = await acme.invoices.createAdhoc(id, { lineItems: [{ title: 'Setup', unitPriceInCents: 3000 }] });
      const chargesBefore = f.gateway.charges.size;

      const part = await acme.invoices.recordPayment(adhoc.uid, { amountInCents: 1000, method: 'payment' });
      expect(part).toMatchObject({ status: 'open', paidInCents: 1000, dueInCents: 2000 });
      expect(part.payments).toHaveLength(1);
      expect(part.payments[0]).toMatchObject({ method: 'payment', amountInCents: 1000 });
      expect(part.payments[0]!.gatewayTransactionId).not.toBeNull();
      expect(f.gateway.charges.size).toBe(chargesBefore + 1);
      const paymentLine = (await acme.subscriptions.transactions(id)).find((l) => l.kind === 'invoice_payment')!;
      expect(paymentLine).toMatchObject({ type: 'payment', amountInCents: 1000, success: true });
      expect(paymentLine.id).toBe(part.payments[0]!.transactionId);
      // No charge line: the invoice already billed its lines.
      expect((await acme.subscriptions.transactions(id)).filter((l) => l.type === 'charge')).toHaveLength(2);

      // A decline rejects, records the failed payment and leaves the invoice as it was.
      f.gateway.injectFailure({ outcome: 'declined', keyPrefix: `invoice_payment:${id}:`, times: 1 });
      const declined = await rejection(
        acme.invoices.recordPayment(adhoc.uid, { amountInCents: 2000, method: 'payment' }),
      );
      expect(declined.code).toBe('payment_declined');
      expect(await acme.invoices.get(adhoc.uid)).toMatchObject({ status: 'open', paidInCents: 1000, dueInCents: 2000 });
      expect((await acme.subscriptions.transactions(id)).filter((l) => l.type === 'info')).toHaveLength(1);
      // More than is due, a paid or draft invoice: refused before the gateway is called.
      const over = await rejection(acme.invoices.recordPayment(adhoc.uid, { amountInCents: 2001, method: 'payment' }));
      expect(over.code).toBe('validation');
      const bogus = await rejection(
        acme.invoices.recordPayment(adhoc.uid, { amountInCents: 1, method: 'cash' as 'payment' }),
      );
      expect(bogus.code).toBe('validation');

      // A lost answer for money taken is looked up by its key and pays the invoice, charged once.
      f.gateway.injectFailure({ outcome: 'unknown', keyPrefix: `invoice_payment:${id}:`, charged: true });
      const lost = await acme.invoices.recordPayment(adhoc.uid, { amountInCents: 500, method: 'payment' });
      expect(lost).toMatchObject({ status: 'open', paidInCents: 1500, dueInCents: 1500 });
      expect(f.gateway.charges.size).toBe(chargesBefore + 2);

      const paid = await acme.invoices.recordPayment(adhoc.uid, {
        amountInCents: 1500,
        method: 'payment',
        memo: 'Card',
      });
      expect(paid).toMatchObject({ status: 'paid', paidInCents: 3000, dueInCents: 0 });
      expect((await acme.subscriptions.get(id)).balanceInCents).toBe(0);
      expect(f.events.filter((e) => e.key === 'payment_success').length).toBeGreaterThanOrEqual(3);
      const again = await rejection(acme.invoices.recordPayment(adhoc.uid, { amountInCents: 1, method: 'payment' }));
      expect(again.code).toBe('validation');
      // A card payment is refunded through the gateway into a credit note.
      const { creditNote } = await acme.invoices.refund(adhoc.uid, { amountInCents: 500, memo: 'Partial' });
      expect(creditNote).toMatchObject({ invoiceUid: adhoc.uid, totalInCents: 500 });
      await checkInvoiceInvariants(f.storage, f.siteId);
    });

    it('refuses a bad draft and an ad-hoc status it does not know, storing nothing', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const sub = await acme.subscriptions.create({ productHandle: 'a', customer: customer(1), creditCard: VISA });
      const bad = await rejection(
        acme.invoices.createAdhoc(sub.subscription.id, {
          lineItems: [{ title: ' ', unitPriceInCents: -1 }],
          status: 'draft',
        }),
      );
      expect(bad.code).toBe('validation');
      const unknown = await rejection(
        acme.invoices.createAdhoc(sub.subscription.id, {
          lineItems: [{ title: 'X', unitPriceInCents: 1 }],
          status: 'pending' as 'draft',
        }),
      );
      expect(unknown.code).toBe('validation');
      expect((await acme.invoices.list()).total).toBe(1);
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
