/**
 * Fuzz on Postgres (the fuzz-db-* files run on SQLite dumps, which keep a NUL and so never showed
 * that Postgres refuses one with a 500): a smaller run of the wire-boundary shapes only, on every
 * main-API route family and the hosted pages' forms. Text with a NUL or a lone surrogate in fields,
 * keys, the path and the query; JSON nested past the limit; number literals past 2^53 and a
 * double's range, -0 and exponents; content types the API refuses. Never a 5xx, and after every
 * refused request and every GET each table has the same rows (count and content). Runs on the
 * server of BILLING_TEST_POSTGRES_URL, else on PGlite.
 */
import { hostedPageToken } from 'billing-engine/chargify';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { closePostgresTestServer } from '../support/postgres.js';
import type { RawRequest } from './support/client.js';
import { API_FAMILIES } from './support/fuzz-cases.js';
import { fuzzApiFamily, fuzzParameters, noNetworkFetch, openPostgresFuzzSession } from './support/fuzz-runner.js';
import { seedSiteWorld } from './support/fuzz-world.js';
import { EDGE_VALUES, edgeMutation } from './support/hostile.js';
import { useHttpFixture } from './support/http-fixture.js';

afterAll(closePostgresTestServer);

const HTML_TYPE = 'text/html; charset=utf-8';

/**
 * Text values of the edge shapes that a form can carry: those with a NUL (sent as `%00`). A lone
 * surrogate cannot be percent-encoded (URLSearchParams writes U+FFFD for it), so it is sent as its
 * raw three bytes instead (`RAW`), which are not UTF-8.
 */
const EDGE_TEXT = [
  ...EDGE_VALUES.filter((value): value is string => typeof value === 'string' && value.includes('\u0000')),
  'RAW',
];
const RAW_SURROGATE = Buffer.from([0xed, 0xa0, 0x80]);

describe('fuzz on Postgres: the wire-boundary shapes never 5xx and change no row', () => {
  const http = useHttpFixture({ rateLimit: false, storage: 'postgres', webhooks: { fetch: noNetworkFetch } });

  Object.keys(API_FAMILIES).forEach((family, index) => {
    it(`${family}: 10 runs of edge-shape mutations, every route of the family each run`, async () => {
      const stats = await fuzzApiFamily(http(), family, 7100 + index, 10, { mutations: edgeMutation });
      // Most must be refused: a GET ignores a body's shapes, and a number literal may be a valid amount.
      expect(stats.rejected, JSON.stringify(stats)).toBeGreaterThan(stats.requests / 3);
    }, 120_000);
  });

  it('hosted pages: card update and portal forms with NUL and lone surrogates in any field', async () => {
    const f = http();
    const own = await seedSiteWorld(f, 'acme');
    await seedSiteWorld(f, 'globex');
    const token = hostedPageToken('update_payment', own.subscriptionId, own.sharedKey);
    const session = await openPostgresFuzzSession(f);
    const cardForm = {
      first_name: 'Page',
      last_name: 'Card',
      full_number: '4111111111111111',
      expiration_month: '09',
      expiration_year: '2033',
      cvv: '123',
    };
    const portalForm = { subscription_id: String(own.subscriptionId), reason: 'bye', product_id: '1' };
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('card', 'cancel', 'change_plan', 'update_card', 'path'),
          fc.nat(),
          fc.constantFrom(...EDGE_TEXT),
          async (target, pick, value) => {
            const base = target === 'card' ? `/update_payment/${own.subscriptionId}/${token}` : own.portalPath;
            const fields: Record<string, string> =
              target === 'card' ? { ...cardForm } : { ...portalForm, ...(target === 'update_card' ? cardForm : {}) };
            const names = Object.keys(fields);
            const name = names[pick % names.length] ?? 'reason';
            fields[name] = value === 'RAW' ? 'RAW' : value;
            const form = new URLSearchParams(fields).toString();
            const raw = form.split('RAW');
            const path =
              target === 'path'
                ? `/update_payment/${own.subscriptionId}%00/${token}`
                : target === 'card'
                  ? base
                  : `${base}/${target}`;
            const request: RawRequest = {
              method: 'POST',
              path,
              headers: {
                host: `acme.localhost:${f.port}`,
                accept: 'text/html',
                'content-type': 'application/x-www-form-urlencoded',
              },
              body:
                value === 'RAW'
                  ? Buffer.concat([Buffer.from(raw[0] ?? ''), RAW_SURROGATE, Buffer.from(raw[1] ?? '')])
                  : form,
            };
            await session.send(request, (reply) => {
              const label = `${request.path} ${String(request.body).slice(0, 200)} → ${reply.status}`;
              // Refused as a page: 422 for text no storage keeps, 404 for a URL that is no link.
              expect([404, 422], label).toContain(reply.status);
              expect(reply.headers['content-type'], label).toBe(HTML_TYPE);
              return { rejected: true };
            });
          },
        ),
        fuzzParameters(7200, 40),
      );
    } finally {
      session.close();
    }
  }, 120_000);
});
