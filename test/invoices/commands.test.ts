/**
 * The `site.invoices` commands beyond billing itself: rendering with the metafields whose
 * `invoices` scope is on, credit notes, statements of a trial, and refusals that change nothing.
 */
import { createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { describe, expect, it } from 'vitest';
import { rejection } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

async function setup() {
  const clock = new ManualClock('2026-05-01T20:00:00Z');
  const engine = createBillingEngine({ storage: createMemoryStorage(), clock, gateway: createTestGateway() });
  await engine.sites.create({ subdomain: 'acme', name: 'Acme Widgets', currency: 'USD', timeZone: 'Asia/Tokyo' });
  const acme = engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  await acme.catalog.createProduct(family.id, {
    name: 'Pro',
    handle: 'pro',
    priceInCents: 4200,
    interval: 1,
    intervalUnit: 'month',
    trialInterval: 7,
    trialIntervalUnit: 'day',
    trialPriceInCents: 0,
  });
  const { subscription } = await acme.subscriptions.create({
    productHandle: 'pro',
    customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
    creditCard: VISA,
  });
  return { engine, clock, acme, subscription };
}

describe('site.invoices commands', () => {
  it('renders an invoice as PDF and HTML with the metafields shown on invoices only', async () => {
    const { engine, clock, acme, subscription } = await setup();
    await acme.metafields.createFields('subscription', [
      { name: 'PO number', scope: { invoices: true } },
      { name: 'Internal', scope: { invoices: false } },
    ]);
    await acme.metafields.setMetadata('subscription', subscription.id, [
      { name: 'PO number', value: 'PO-7781' },
      { name: 'Internal', value: 'secret-note' },
    ]);
    clock.set('2026-05-09T00:00:00Z');
    await engine.runDue();
    const [invoice] = (await acme.invoices.list()).invoices;
    expect(invoice).toMatchObject({ status: 'paid', totalInCents: 4200, role: 'renewal' });
    // The trial ended at 2026-05-08T20:00Z, 05:00 on the 9th in Tokyo: the issue date is the site's.
    expect(invoice!.issueDate).toBe('2026-05-09');
    expect(invoice!.createdAt.toISOString()).toBe('2026-05-08T20:00:00.000Z');
    const html = await acme.invoices.render(invoice!.uid, 'html');
    expect(html).toContain(invoice!.number);
    expect(html).toContain('PO-7781');
    expect(html).not.toContain('secret-note');
    const pdf = await acme.invoices.render(invoice!.uid, 'pdf');
    expect(Buffer.from(pdf.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
    expect((await rejection(acme.invoices.render('inv_nope', 'pdf'))).code).toBe('not_found');
  });

  it('issues a credit note per refund, lists and renders them, and refuses bad refunds unchanged', async () => {
    const { engine, clock, acme, subscription } = await setup();
    clock.set('2026-05-09T00:00:00Z');
    await engine.runDue();
    const [invoice] = (await acme.invoices.list()).invoices;
    const first = await acme.invoices.refund(invoice!.uid, { amountInCents: 1000, memo: 'Partial' });
    const second = await acme.invoices.refund(invoice!.uid, { amountInCents: 3200, memo: 'Rest' });
    expect(second.invoice.refundInCents).toBe(4200);
    expect([first.creditNote.number, second.creditNote.number]).toEqual(['CN-1', 'CN-2']);
    for (const bad of [
      { amountInCents: 1, memo: 'More' },
      { amountInCents: 0, memo: 'Zero' },
      { amountInCents: 5, memo: '' },
    ])
      expect((await rejection(acme.invoices.refund(invoice!.uid, bad))).code).toBe('validation');
    expect((await acme.invoices.get(invoice!.uid)).refundInCents).toBe(4200);
    const listed = await acme.invoices.listCreditNotes({ subscriptionId: subscription.id, direction: 'asc' });
    expect(listed.creditNotes.map((n) => n.totalInCents)).toEqual([1000, 3200]);
    expect(await acme.invoices.getCreditNote(first.creditNote.uid)).toEqual(first.creditNote);
    const pdf = await acme.invoices.renderCreditNote(first.creditNote.uid, 'pdf');
    expect(Buffer.from(pdf.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
    expect((await acme.invoices.events(invoice!.uid)).filter((e) => e.eventType === 'refund_invoice')).toHaveLength(2);
  });

  it('gives one statement per billed period, and refuses bad input', async () => {
    const { engine, clock, acme, subscription } = await setup();
    clock.set('2026-05-09T00:00:00Z');
    await engine.runDue();
    clock.set('2026-06-09T00:00:00Z');
    await engine.runDue();
    const statements = await acme.invoices.statements(subscription.id);
    // The trial bills nothing; the period the trial's end starts is the subscription's period 0.
    expect(statements.map((s) => s.periodIndex)).toEqual([0, 1]);
    for (const s of statements) {
      expect(s).toMatchObject({ openingBalanceInCents: 0, totalChargesInCents: 4200, totalPaymentsInCents: 4200 });
      expect(s.invoiceUids).toHaveLength(1);
    }
    expect(statements[0]!.openedAt.toISOString()).toBe('2026-05-08T20:00:00.000Z');
    expect(statements[0]!.closedAt?.toISOString()).toBe('2026-06-08T20:00:00.000Z');
    expect(statements[1]!.closedAt).toBeNull();
    expect((await rejection(acme.invoices.statement(12))).code).toBe('not_found');
    expect((await rejection(acme.invoices.list({ perPage: 0 }))).code).toBe('validation');
    expect((await rejection(acme.invoices.issue(statements[1]!.invoiceUids[0]!))).code).toBe('validation');
    expect((await rejection(acme.invoices.void(statements[1]!.invoiceUids[0]!, 'paid'))).code).toBe('validation');
    expect((await rejection(acme.invoices.createAdhoc(subscription.id, { lineItems: [] }))).code).toBe('validation');
    expect((await acme.invoices.list()).total).toBe(2);
  });
});
