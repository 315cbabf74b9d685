/**
 * Invoice webhooks (issue #17): `invoice_issued`, `invoice_voided` and `credit_note_created` carry
 * the document; `payment_success` and `payment_failure` carry the invoice they concern.
 */
import { createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { describe, expect, it } from 'vitest';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

describe('invoice webhooks', () => {
  it('carry the invoice or credit note in the service shape', async () => {
    const clock = new ManualClock('2026-02-01T10:00:00Z');
    const gateway = createTestGateway();
    const engine = createBillingEngine({ storage: createMemoryStorage(), clock, gateway });
    await engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
    const acme = engine.site('acme');
    await acme.webhooks.createEndpoint({
      url: 'https://hooks.example.com/billing',
      webhookSubscriptions: [
        'invoice_issued',
        'invoice_voided',
        'credit_note_created',
        'payment_success',
        'payment_failure',
      ],
    });
    const family = await acme.catalog.createFamily({ name: 'Plans' });
    await acme.catalog.createProduct(family.id, {
      name: 'Basic',
      handle: 'basic',
      priceInCents: 1250,
      interval: 1,
      intervalUnit: 'month',
    });
    const { subscription } = await acme.subscriptions.create({
      productHandle: 'basic',
      customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
      creditCard: VISA,
    });
    const [invoice] = (await acme.invoices.list()).invoices;
    expect(invoice).toBeDefined();
    const bodies = async (event: string) =>
      (await acme.webhooks.list()).filter((w) => w.event === event).map((w) => new URLSearchParams(w.body));

    const [issued] = await bodies('invoice_issued');
    expect(issued?.get('payload[uid]')).toBe(invoice!.uid);
    expect(issued?.get('payload[number]')).toBe('1');
    expect(issued?.get('payload[total_amount]')).toBe('12.50');
    expect(issued?.get('payload[line_items][0][title]')).toBe(invoice!.lineItems[0]!.title);

    const [paid] = await bodies('payment_success');
    expect(paid?.get('payload[invoice][uid]')).toBe(invoice!.uid);
    expect(paid?.get('payload[invoice][number]')).toBe('1');
    expect(paid?.get('payload[invoice][paid_amount]')).toBe('12.50');
    expect(paid?.get('payload[invoice][due_amount]')).toBe('0.00');

    // A declined renewal: the failure names the open invoice it leaves due.
    gateway.injectFailure({ outcome: 'declined', keyPrefix: 'renewal:' });
    clock.set('2026-03-01T11:00:00Z');
    await engine.runDue();
    const open = (await acme.invoices.list({ status: 'open' })).invoices[0]!;
    const [failed] = await bodies('payment_failure');
    expect(failed?.get('payload[invoice][uid]')).toBe(open.uid);
    expect(failed?.get('payload[invoice][due_amount]')).toBe('12.50');

    const { creditNote } = await acme.invoices.refund(invoice!.uid, { amountInCents: 250, memo: 'Sorry' });
    const [note] = await bodies('credit_note_created');
    expect(note?.get('payload[uid]')).toBe(creditNote.uid);
    expect(note?.get('payload[invoice_uid]')).toBe(invoice!.uid);
    expect(note?.get('payload[total_amount]')).toBe('2.50');

    const adhoc = await acme.invoices.createAdhoc(subscription.id, {
      lineItems: [{ title: 'X', unitPriceInCents: 99 }],
    });
    await acme.invoices.void(adhoc.uid, 'Mistake');
    const [voided] = await bodies('invoice_voided');
    expect(voided?.get('payload[uid]')).toBe(adhoc.uid);
    expect(voided?.get('payload[status]')).toBe('voided');
    expect(voided?.get('payload[reason]')).toBe('Mistake');
  });
});
