import { APIExportsController, ApiError, type Client } from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';
import { maxioClient, sdk } from './support/maxio-sdk.js';

/**
 * Exports of subscriptions and invoices through the official Maxio SDK in `chargify` compat: a job
 * is started, its status read, its rows paged, every response validated by the SDK's schemas.
 */

function client(f: HttpFixture, site: 'acme' | 'globex' = 'acme'): Client {
  return maxioClient({ port: f.port, site, apiKey: f.keys[site] });
}

async function status(call: Promise<unknown>): Promise<number> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiError) return error.statusCode;
    throw error;
  }
  throw new Error('expected the SDK call to fail');
}

async function subscribeThree(f: HttpFixture): Promise<number[]> {
  await seedCatalog(f.engine);
  const ids: number[] = [];
  for (const n of [1, 2, 3]) {
    const body = signupBody() as { subscription: { customer_attributes: Record<string, unknown> } };
    body.subscription.customer_attributes.email = `c${n}@example.com`;
    body.subscription.customer_attributes.reference = `ref-${n}`;
    const reply = await f.as('acme', { method: 'POST', path: '/subscriptions.json', json: body });
    expect(reply.status).toBe(201);
    ids.push(reply.json<{ subscription: { id: number } }>().subscription.id);
  }
  return ids;
}

describe('official Maxio SDK 6.1.0: API exports', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('exports subscriptions: a completed job and its rows, paged, as the SDK reads them', async () => {
    const f = fixture();
    const ids = await subscribeThree(f);
    const exports = new APIExportsController(client(f));
    const started = await sdk(exports.exportSubscriptions());
    expect(started.batchjob).toMatchObject({ rowCount: 3, completed: 'true' });
    expect(started.batchjob.createdAt).toBe('2026-01-15T07:00:00-05:00');
    const batchId = String(started.batchjob.id);
    expect(await sdk(exports.readSubscriptionsExport(batchId))).toEqual(started);
    const first = await sdk(exports.listExportedSubscriptions({ batchId, perPage: 2, page: 1 }));
    const second = await sdk(exports.listExportedSubscriptions({ batchId, perPage: 2, page: 2 }));
    expect([...first, ...second].map((s) => s.id)).toEqual(ids);
    expect(first[0]).toMatchObject({ state: 'active', customer: { reference: 'ref-1' }, product: { handle: 'pro' } });
    // A subscription created after the job is not in it.
    await f.as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    expect(await sdk(exports.listExportedSubscriptions({ batchId, perPage: 200 }))).toHaveLength(3);
    // The job is not an invoices job, nor visible to another site.
    expect(await status(exports.readInvoicesExport(batchId))).toBe(404);
    expect(await status(new APIExportsController(client(f, 'globex')).readSubscriptionsExport(batchId))).toBe(404);
    expect(await status(exports.readSubscriptionsExport('nope'))).toBe(404);
  });

  it('exports invoices with their rows', async () => {
    const f = fixture();
    await subscribeThree(f);
    const exports = new APIExportsController(client(f));
    const started = await sdk(exports.exportInvoices());
    expect(started.batchjob.completed).toBe('true');
    const batchId = String(started.batchjob.id);
    const rows = await sdk(exports.listExportedInvoices({ batchId, perPage: 200 }));
    expect(rows).toHaveLength(started.batchjob.rowCount as number);
    expect(rows.length).toBe(3);
    expect(rows.every((i) => typeof i.uid === 'string' && i.uid.startsWith('inv_'))).toBe(true);
    expect(await sdk(exports.listExportedInvoices({ batchId, page: 2, perPage: 200 }))).toEqual([]);
  });
});
