import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';

/**
 * The proforma invoice routes over HTTP: status codes, the paths that must not fall into
 * `/subscriptions/{id}.json`, the list's breakdown flags, and bad input refused with a 422 in the
 * service's `{"errors":[...]}` style, changing nothing.
 */

interface ProformaBody {
  uid?: string;
  number: number | null;
  status: string;
  subscription_id: number | null;
  total_amount: string;
  line_items?: unknown[];
  discounts?: unknown[];
}

async function subscribed(f: HttpFixture): Promise<number> {
  await seedCatalog(f.engine);
  const reply = await f.as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
  expect(reply.status).toBe(201);
  return reply.json<{ subscription: { id: number } }>().subscription.id;
}

describe('proforma invoice routes', () => {
  const fixture = useHttpFixture();

  it('creates (201), previews (200), reads, lists and voids, billing nothing', async () => {
    const f = fixture();
    const id = await subscribed(f);
    const transactions = async () =>
      (await f.as('acme', { path: `/subscriptions/${id}/transactions.json` })).json<unknown[]>().length;
    const linesBefore = await transactions();

    const preview = await f.as('acme', { method: 'POST', path: `/subscriptions/${id}/proforma_invoices/preview.json` });
    expect(preview.status).toBe(200);
    expect(preview.json<ProformaBody>()).toMatchObject({ number: null, status: 'draft', total_amount: '10.00' });
    expect(preview.json<ProformaBody>().uid).toBeUndefined();

    const created = await f.as('acme', { method: 'POST', path: `/subscriptions/${id}/proforma_invoices.json` });
    expect(created.status).toBe(201);
    const body = created.json<ProformaBody>();
    expect(body).toMatchObject({ number: 1, status: 'draft', subscription_id: id, total_amount: '10.00' });

    const read = await f.as('acme', { path: `/proforma_invoices/${body.uid}.json` });
    expect(read.status).toBe(200);
    expect(read.json()).toEqual(body);

    const list = await f.as('acme', { path: `/subscriptions/${id}/proforma_invoices.json` });
    expect(list.status).toBe(200);
    const listed = list.json<{ proforma_invoices: ProformaBody[]; meta: unknown }>();
    expect(listed.proforma_invoices.map((p) => p.uid)).toEqual([body.uid]);
    expect(listed.proforma_invoices[0]!.line_items).toBeUndefined();
    expect(listed.meta).toEqual({ total_count: 1, current_page: 1, total_pages: 1, status_code: 200 });
    const full = await f.as('acme', {
      path: `/subscriptions/${id}/proforma_invoices.json?line_items=true&discounts=1`,
    });
    const fullBody = full.json<{ proforma_invoices: ProformaBody[] }>().proforma_invoices[0]!;
    expect([fullBody.line_items?.length, fullBody.discounts]).toEqual([1, []]);

    const voided = await f.as('acme', {
      method: 'POST',
      path: `/proforma_invoices/${body.uid}/void.json`,
      json: { void: { reason: 'Changed my mind' } },
    });
    expect(voided.status).toBe(200);
    expect(voided.json<ProformaBody>().status).toBe('voided');

    expect(await transactions()).toBe(linesBefore);
  });

  it('serves the signup paths rather than reading them as subscription ids', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const signup = signupBody() as { subscription: Record<string, unknown> };
    const created = await f.as('acme', { method: 'POST', path: '/subscriptions/proforma_invoices.json', json: signup });
    expect(created.status).toBe(201);
    expect(created.json<ProformaBody>()).toMatchObject({ number: 1, subscription_id: null, total_amount: '10.00' });
    const preview = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions/proforma_invoices/preview.json?include=next_proforma_invoice',
      json: signup,
    });
    expect(preview.status).toBe(200);
    const shown = preview.json<{ proforma_invoice_preview: Record<string, ProformaBody> }>().proforma_invoice_preview;
    expect(Object.keys(shown).sort()).toEqual(['current_proforma_invoice', 'next_proforma_invoice']);
    // Nobody signed up; the card given was never stored.
    const subscriptions = await f.as('acme', { path: '/subscriptions.json' });
    expect(subscriptions.json()).toEqual([]);
  });

  it('refuses bad input with a 422 and changes nothing', async () => {
    const f = fixture();
    const id = await subscribed(f);
    const made = (
      await f.as('acme', { method: 'POST', path: `/subscriptions/${id}/proforma_invoices.json` })
    ).json<ProformaBody>();

    const badList = await f.as('acme', {
      path: `/subscriptions/${id}/proforma_invoices.json?status=open&end_date=2026-13-01&direction=sideways`,
    });
    expect(badList.status).toBe(422);
    expect(badList.json()).toEqual({
      errors: [
        'Status: must be one of draft, voided.',
        'End date: must be a date (YYYY-MM-DD).',
        "Direction: must be 'asc' or 'desc'.",
      ],
    });

    const noReason = await f.as('acme', {
      method: 'POST',
      path: `/proforma_invoices/${made.uid}/void.json`,
      json: { void: { reason: ' ' } },
    });
    expect(noReason.status).toBe(422);
    expect(noReason.json()).toEqual({ errors: ['Reason: cannot be blank.'] });
    const still = await f.as('acme', { path: `/proforma_invoices/${made.uid}.json` });
    expect(still.json<ProformaBody>().status).toBe('draft');

    const badInclude = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions/proforma_invoices/preview.json?include=everything',
      json: signupBody(),
    });
    expect(badInclude.status).toBe(422);
    expect(badInclude.json()).toEqual({ errors: ['Include: must be next_proforma_invoice.'] });

    const noCustomer = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions/proforma_invoices.json',
      json: { subscription: { product_handle: 'pro' } },
    });
    expect(noCustomer.status).toBe(422);

    const canceled = await f.as('acme', { method: 'DELETE', path: `/subscriptions/${id}.json` });
    expect(canceled.status, JSON.stringify(f.logged.map(String))).toBe(200);
    const refused = await f.as('acme', { method: 'POST', path: `/subscriptions/${id}/proforma_invoices.json` });
    expect(refused.status).toBe(422);

    expect((await f.as('acme', { path: '/proforma_invoices/pro_missing.json' })).status).toBe(404);
    expect((await f.as('acme', { method: 'POST', path: '/subscriptions/abc/proforma_invoices.json' })).status).toBe(
      404,
    );
    expect((await f.as('globex', { path: `/proforma_invoices/${made.uid}.json` })).status).toBe(404);

    // Only the first one was kept: the refused calls took no number.
    const list = await f.as('acme', { path: `/subscriptions/${id}/proforma_invoices.json` });
    expect(list.json<{ proforma_invoices: ProformaBody[] }>().proforma_invoices.map((p) => p.number)).toEqual([1]);
  });

  it('exports proforma invoices as a third kind of job', async () => {
    const f = fixture();
    const id = await subscribed(f);
    const made = (
      await f.as('acme', { method: 'POST', path: `/subscriptions/${id}/proforma_invoices.json` })
    ).json<ProformaBody>();
    const started = await f.as('acme', { method: 'POST', path: '/api_exports/proforma_invoices.json' });
    expect(started.status).toBe(201);
    const job = started.json<{ batchjob: { id: number; row_count: number } }>().batchjob;
    expect(job.row_count).toBe(1);
    const status = await f.as('acme', { path: `/api_exports/proforma_invoices/${job.id}.json` });
    expect(status.status).toBe(200);
    const rows = await f.as('acme', { path: `/api_exports/proforma_invoices/${job.id}/rows.json` });
    expect(rows.json<ProformaBody[]>().map((p) => p.uid)).toEqual([made.uid]);
    expect((await f.as('acme', { path: `/api_exports/subscriptions/${job.id}.json` })).status).toBe(404);
  });
});
