import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';

/**
 * The renewal preview and the proforma invoice of a delayed signup not started yet
 * (`awaiting_signup`) over HTTP: both answer with what the start will bill at
 * `initial_billing_at` (they were a 422), billing nothing. Timestamps are in the site's zone (New
 * York).
 */

interface RenewalPreviewBody {
  renewal_preview: {
    next_assessment_at: string;
    total_in_cents: number;
    existing_balance_in_cents: number;
    total_amount_due_in_cents: number;
    line_items: { kind: string; amount_in_cents: number; period_range_start: string }[];
  };
}

interface ProformaBody {
  uid?: string;
  number: number | null;
  status: string;
  subscription_id: number | null;
  delivery_date: string;
  total_amount: string;
}

async function delayedSignup(f: HttpFixture): Promise<number> {
  await seedCatalog(f.engine);
  const body = signupBody('pro') as { subscription: Record<string, unknown> };
  const created = await f.as('acme', {
    method: 'POST',
    path: '/subscriptions.json',
    json: { subscription: { ...body.subscription, initial_billing_at: '2026-02-01T09:00:00-05:00' } },
  });
  expect(created.status, created.text).toBe(201);
  const { id, state } = created.json<{ subscription: { id: number; state: string } }>().subscription;
  expect(state).toBe('awaiting_signup');
  return id;
}

describe('awaiting_signup: renewal preview and proforma invoice routes', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('previews the start as the renewal (200), and previews and keeps its proforma invoice (200, 201)', async () => {
    const f = fixture();
    const id = await delayedSignup(f);
    const transactions = async () =>
      (await f.as('acme', { path: `/subscriptions/${id}/transactions.json` })).json<unknown[]>().length;

    const renewal = await f.as('acme', { method: 'POST', path: `/subscriptions/${id}/renewals/preview.json` });
    expect(renewal.status, renewal.text).toBe(200);
    const preview = renewal.json<RenewalPreviewBody>().renewal_preview;
    expect({
      next_assessment_at: preview.next_assessment_at,
      total_in_cents: preview.total_in_cents,
      existing_balance_in_cents: preview.existing_balance_in_cents,
      total_amount_due_in_cents: preview.total_amount_due_in_cents,
      line_items: preview.line_items.map((l) => [l.kind, l.amount_in_cents, l.period_range_start]),
    }).toEqual({
      next_assessment_at: '2026-02-01T09:00:00-05:00',
      total_in_cents: 1000,
      existing_balance_in_cents: 0,
      total_amount_due_in_cents: 1000,
      line_items: [['baseline', 1000, '2026-02-01T09:00:00-05:00']],
    });

    const proforma = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${id}/proforma_invoices/preview.json`,
    });
    expect(proforma.status, proforma.text).toBe(200);
    expect(proforma.json<ProformaBody>()).toMatchObject({
      number: null,
      status: 'draft',
      subscription_id: id,
      delivery_date: '2026-02-01',
      total_amount: '10.00',
    });

    const created = await f.as('acme', { method: 'POST', path: `/subscriptions/${id}/proforma_invoices.json` });
    expect(created.status, created.text).toBe(201);
    expect(created.json<ProformaBody>()).toMatchObject({
      number: 1,
      status: 'draft',
      subscription_id: id,
      delivery_date: '2026-02-01',
      total_amount: '10.00',
    });
    expect(await transactions()).toBe(0);
    expect(f.gateway.chargeCalls).toBe(0);
  });

  it('still refuses both once the delayed signup is canceled (422)', async () => {
    const f = fixture();
    const id = await delayedSignup(f);
    const canceled = await f.as('acme', { method: 'DELETE', path: `/subscriptions/${id}.json` });
    expect(canceled.status, canceled.text).toBe(200);
    for (const path of [
      `/subscriptions/${id}/renewals/preview.json`,
      `/subscriptions/${id}/proforma_invoices/preview.json`,
      `/subscriptions/${id}/proforma_invoices.json`,
    ]) {
      const refused = await f.as('acme', { method: 'POST', path });
      expect(refused.status, `${path}: ${refused.text}`).toBe(422);
    }
  });
});
