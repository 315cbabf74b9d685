import {
  APIExportsController,
  type Client,
  CreateSignupProformaPreviewInclude,
  Direction,
  InvoicesController,
  ProformaInvoiceRole,
  ProformaInvoiceStatus,
  ProformaInvoicesController,
  SubscriptionsController,
} from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { acmeClient, maxioClient, sdk, sdkFailure } from './support/maxio-sdk.js';

/**
 * Proforma invoices through the official Maxio SDK 6.1.0 in `chargify` compat: every
 * `ProformaInvoicesController` method that does not involve subscription groups, and the proforma
 * invoice exports of `APIExportsController`, each answer parsed by the SDK's own schemas.
 */

const CARD = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

async function subscribe(c: Client, email = 'ada@example.com'): Promise<number> {
  const created = await sdk(
    new SubscriptionsController(c).createSubscription({
      subscription: {
        productHandle: 'pro',
        customerAttributes: { firstName: 'Ada', lastName: 'Lovelace', email, organization: 'Analytical' },
        creditCardAttributes: CARD,
      },
    }),
  );
  return created.subscription!.id as number;
}

function globexClient(f: HttpFixture): Client {
  return maxioClient({ port: f.port, site: 'globex', apiKey: f.keys.globex });
}

describe('official Maxio SDK 6.1.0: proforma invoices', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it("creates, reads, lists and voids a subscription's proforma invoices", async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const c = acmeClient(f);
    const id = await subscribe(c);
    const proformas = new ProformaInvoicesController(c);

    const preview = await sdk(proformas.previewProformaInvoice(id));
    expect(preview.uid).toBeUndefined();
    expect(preview.number).toBeNull();

    const created = await sdk(proformas.createProformaInvoice(id));
    expect(created.uid).toMatch(/^pro_/);
    expect(created).toMatchObject({
      number: 1,
      sequenceNumber: 1,
      subscriptionId: id,
      status: ProformaInvoiceStatus.Draft,
      role: ProformaInvoiceRole.ProformaAdhoc,
      collectionMethod: 'automatic',
      currency: 'USD',
      consolidationLevel: 'none',
      productName: 'Pro',
      productFamilyName: 'Acme Projects',
      // The renewal is due on 2026-02-15 in New York.
      deliveryDate: '2026-02-15',
      createdAt: '2026-01-15T07:00:00-05:00',
      subtotalAmount: '10.00',
      discountAmount: '0.00',
      totalAmount: '10.00',
      dueAmount: '10.00',
      paidAmount: '0.00',
      customer: { firstName: 'Ada', lastName: 'Lovelace', organization: 'Analytical', email: 'ada@example.com' },
    });
    expect(created.lineItems).toHaveLength(1);
    expect(created.lineItems?.[0]).toMatchObject({
      uid: `${created.uid}_li_1`,
      totalAmount: '10.00',
      periodRangeStart: '2026-02-15',
      periodRangeEnd: '2026-03-15',
    });
    // The preview showed what create kept, bar the uid and number.
    expect(preview.totalAmount).toBe(created.totalAmount);
    expect(preview.lineItems?.map((l) => l.title)).toEqual(created.lineItems?.map((l) => l.title));

    expect(await sdk(proformas.readProformaInvoice(created.uid!))).toEqual(created);
    // No invoice was issued beyond the signup's.
    const invoices = await sdk(new InvoicesController(c).listInvoices({ subscriptionId: id }));
    expect(invoices.invoices).toHaveLength(1);

    const second = await sdk(proformas.createProformaInvoice(id));
    expect(second.number).toBe(2);
    const voided = await sdk(proformas.voidProformaInvoice(second.uid!, { mVoid: { reason: 'Superseded' } }));
    expect(voided.status).toBe(ProformaInvoiceStatus.Voided);
    const twice = await sdkFailure(proformas.voidProformaInvoice(second.uid!, { mVoid: { reason: 'Again' } }));
    expect(twice).toEqual({
      status: 422,
      body: { errors: ['Proforma invoice: only a draft proforma invoice can be voided.'] },
    });

    // Totals only unless a breakdown is asked for.
    const list = await sdk(proformas.listProformaInvoices({ subscriptionId: id }));
    expect(list.proformaInvoices?.map((p) => p.number)).toEqual([2, 1]);
    expect(list.proformaInvoices?.[0]?.lineItems).toBeUndefined();
    expect(list.meta).toEqual({ totalCount: 2, currentPage: 1, totalPages: 1, statusCode: 200 });
    const drafts = await sdk(
      proformas.listProformaInvoices({
        subscriptionId: id,
        status: ProformaInvoiceStatus.Draft,
        direction: Direction.Asc,
        lineItems: true,
      }),
    );
    expect(drafts.proformaInvoices?.map((p) => p.uid)).toEqual([created.uid]);
    expect(drafts.proformaInvoices?.[0]?.lineItems).toHaveLength(1);
    const dated = await sdk(proformas.listProformaInvoices({ subscriptionId: id, startDate: '2026-02-16' }));
    expect(dated.proformaInvoices).toEqual([]);

    // Another site sees none of it.
    const other = new ProformaInvoicesController(globexClient(f));
    expect((await sdkFailure(other.readProformaInvoice(created.uid!))).status).toBe(404);
    expect((await sdkFailure(other.createProformaInvoice(id))).status).toBe(404);
  });

  it("makes and previews a signup's proforma invoice without signing up", async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const c = acmeClient(f);
    const proformas = new ProformaInvoicesController(c);
    const body = {
      subscription: {
        productHandle: 'pro',
        customerAttributes: { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com' },
      },
    };
    const created = await sdk(proformas.createSignupProformaInvoice(body));
    expect(created).toMatchObject({
      number: 1,
      subscriptionId: null,
      customerId: null,
      status: ProformaInvoiceStatus.Draft,
      deliveryDate: '2026-01-15',
      totalAmount: '10.00',
      customer: { chargifyId: null, firstName: 'Grace', email: 'grace@example.com' },
    });
    expect(await sdk(proformas.readProformaInvoice(created.uid!))).toEqual(created);

    const preview = await sdk(
      proformas.previewSignupProformaInvoice(CreateSignupProformaPreviewInclude.NextProformaInvoice, body),
    );
    expect(preview.proformaInvoicePreview.currentProformaInvoice).toMatchObject({ totalAmount: '10.00' });
    expect(preview.proformaInvoicePreview.nextProformaInvoice).toMatchObject({
      totalAmount: '10.00',
      deliveryDate: '2026-02-15',
    });
    const without = await sdk(proformas.previewSignupProformaInvoice(undefined, body));
    expect(without.proformaInvoicePreview.nextProformaInvoice).toBeUndefined();

    // Nobody signed up.
    expect(await sdk(new SubscriptionsController(c).listSubscriptions({}))).toEqual([]);

    const unknown = await sdkFailure(
      proformas.createSignupProformaInvoice({ subscription: { ...body.subscription, productHandle: 'nope' } }),
    );
    expect(unknown).toEqual({
      status: 422,
      body: { errors: ["Product with API Handle 'nope' does not exist for this site."] },
    });
  });

  it('exports proforma invoices: a completed job and its rows, paged', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const c = acmeClient(f);
    const id = await subscribe(c);
    const proformas = new ProformaInvoicesController(c);
    const uids: string[] = [];
    for (let n = 0; n < 3; n += 1) uids.push((await sdk(proformas.createProformaInvoice(id))).uid!);
    const exports = new APIExportsController(c);
    const started = await sdk(exports.exportProformaInvoices());
    expect(started.batchjob).toMatchObject({ rowCount: 3, completed: 'true' });
    const batchId = String(started.batchjob.id);
    expect(await sdk(exports.readProformaInvoicesExport(batchId))).toEqual(started);
    const first = await sdk(exports.listExportedProformaInvoices({ batchId, perPage: 2, page: 1 }));
    const second = await sdk(exports.listExportedProformaInvoices({ batchId, perPage: 2, page: 2 }));
    expect([...first, ...second].map((p) => p.uid)).toEqual(uids);
    expect(first[0]).toMatchObject({ subscriptionId: id, totalAmount: '10.00', status: ProformaInvoiceStatus.Draft });
    expect((await sdkFailure(exports.readInvoicesExport(batchId))).status).toBe(404);
    expect(
      (await sdkFailure(new APIExportsController(globexClient(f)).readProformaInvoicesExport(batchId))).status,
    ).toBe(404);
  });
});
