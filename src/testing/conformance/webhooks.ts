import assert from 'node:assert/strict';
import type {
  DirectCallRecord,
  SiteRecord,
  Storage,
  WebhookEndpointRecord,
  WebhookRecord,
  WebhooksRepository,
} from 'billing-engine';
import { BillingError } from 'billing-engine';
import { at, newSiteFixture, type SectionContext, T0 } from './harness.js';

class Abort extends Error {}

type NewEndpoint = Omit<WebhookEndpointRecord, 'id'>;
type NewWebhook = Omit<WebhookRecord, 'id'>;

function endpointFixture(site: SiteRecord, overrides: Partial<NewEndpoint> = {}): NewEndpoint {
  return {
    siteId: site.id,
    url: 'https://hooks.example.com/billing?sig={signature_hmac_sha_256}',
    events: ['subscription_state_change', 'signup_success', 'payment_failure'],
    status: 'enabled',
    failureCount: 0,
    createdAt: T0,
    updatedAt: at(T0, 1),
    ...overrides,
  };
}

/** A webhook whose body has every character class a form body can carry, so any re-encoding shows. */
function webhookFixture(endpoint: WebhookEndpointRecord, overrides: Partial<NewWebhook> = {}): NewWebhook {
  return {
    siteId: endpoint.siteId,
    endpointId: endpoint.id,
    eventId: 41,
    eventKey: 'subscription_state_change',
    body: 'id=1&event=subscription_state_change&payload[subscription][state]=past_due&payload[memo]=caf%C3%A9%20%2B%20%26&payload[event_id]=41',
    status: 'pending',
    attempts: 0,
    lastSentAt: null,
    lastSentUrl: null,
    lastError: null,
    lastErrorAt: null,
    acceptedAt: null,
    createdAt: at(T0, 10),
    updatedAt: at(T0, 10),
    ...overrides,
  };
}

async function seed(
  storage: Storage,
  name: string,
): Promise<{ site: SiteRecord; other: SiteRecord; endpoint: WebhookEndpointRecord }> {
  return storage.transaction(async (tx) => {
    const site = await tx.sites.insert(newSiteFixture(`${name}-a`));
    const other = await tx.sites.insert(newSiteFixture(`${name}-b`));
    const endpoint = await tx.webhooks.insertEndpoint(endpointFixture(site));
    return { site, other, endpoint };
  });
}

/**
 * The patch `updateWebhook` needs for the webhook service: a body set right after the insert,
 * because the body starts with the row's own id. The port's patch type does not list `body` yet.
 */
type BodyPatch = Parameters<WebhooksRepository['updateWebhook']>[2] & { readonly body: string };

/**
 * Cases for webhook endpoints and deliveries (`tx.webhooks`) and direct-post call records
 * (`tx.directCalls`): exact round trips, partial updates, tenancy, the atomic failure counter under
 * concurrency, list filters and order, and rollback; and direct-post replay claims.
 */
export function webhookCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('webhooks', () => {
    it('stores endpoints exactly, lists them by id and hides them from other sites', async () => {
      const { site, other, endpoint } = await seed(storage(), 'wh-ep');
      const { id, ...fields } = endpoint;
      assert.ok(Number.isSafeInteger(id) && id > 0);
      assert.deepEqual(fields, endpointFixture(site));
      const second = await storage().transaction((tx) =>
        tx.webhooks.insertEndpoint(
          endpointFixture(site, {
            url: 'http://two.example.com/',
            events: ['test'],
            status: 'paused',
            failureCount: 30,
          }),
        ),
      );
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.webhooks.findEndpoint(site.id, endpoint.id), endpoint);
        assert.deepEqual(await tx.webhooks.listEndpoints(site.id), [endpoint, second]);
        assert.deepEqual((await tx.webhooks.findEndpoint(site.id, second.id))?.events, ['test']);
        assert.equal(await tx.webhooks.findEndpoint(other.id, endpoint.id), undefined);
        assert.deepEqual(await tx.webhooks.listEndpoints(other.id), []);
        assert.equal(await tx.webhooks.findEndpoint(site.id, 987_654), undefined);
      });
      const copy = await storage().transaction((tx) => tx.webhooks.findEndpoint(site.id, endpoint.id));
      (copy!.events as string[]).push('mutated');
      const again = await storage().transaction((tx) => tx.webhooks.findEndpoint(site.id, endpoint.id));
      assert.deepEqual(again?.events, endpoint.events, 'records handed out are copies');
    });

    it('lists endpoints afresh within one transaction after each endpoint write, as copies', async () => {
      const { site, endpoint } = await seed(storage(), 'wh-in-tx');
      await storage().transaction(async (tx) => {
        const listed = await tx.webhooks.listEndpoints(site.id);
        assert.deepEqual(listed, [endpoint]);
        (listed[0]!.events as string[]).push('mutated');
        listed.pop();
        assert.deepEqual(await tx.webhooks.listEndpoints(site.id), [endpoint]);
        const second = await tx.webhooks.insertEndpoint(endpointFixture(site, { url: 'http://second.example.com/' }));
        assert.deepEqual(await tx.webhooks.listEndpoints(site.id), [endpoint, second]);
        await tx.webhooks.countFailure(site.id, endpoint.id, T0);
        assert.equal((await tx.webhooks.listEndpoints(site.id))[0]?.failureCount, endpoint.failureCount + 1);
        await tx.webhooks.updateEndpoint(site.id, second.id, { status: 'paused' });
        assert.equal((await tx.webhooks.listEndpoints(site.id))[1]?.status, 'paused');
        assert.equal(await tx.webhooks.deleteEndpoint(site.id, second.id), true);
        assert.equal((await tx.webhooks.listEndpoints(site.id)).length, 1);
      });
    });

    it('updates only the given endpoint fields, within the site', async () => {
      const { site, other, endpoint } = await seed(storage(), 'wh-upd');
      const later = at(T0, 5000);
      const updated = await storage().transaction((tx) =>
        tx.webhooks.updateEndpoint(site.id, endpoint.id, { status: 'disabled', failureCount: 51, updatedAt: later }),
      );
      assert.deepEqual(updated, { ...endpoint, status: 'disabled', failureCount: 51, updatedAt: later });
      const moved = await storage().transaction((tx) =>
        tx.webhooks.updateEndpoint(site.id, endpoint.id, {
          url: 'https://new.example.com/',
          events: ['customer_update'],
        }),
      );
      assert.equal(moved?.url, 'https://new.example.com/');
      assert.deepEqual(moved?.events, ['customer_update']);
      assert.equal(moved?.failureCount, 51, 'fields not in the patch keep their values');
      await storage().transaction(async (tx) => {
        assert.equal(await tx.webhooks.updateEndpoint(other.id, endpoint.id, { failureCount: 0 }), undefined);
        assert.equal(await tx.webhooks.updateEndpoint(site.id, 987_654, { failureCount: 0 }), undefined);
        assert.equal((await tx.webhooks.findEndpoint(site.id, endpoint.id))?.failureCount, 51);
      });
    });

    it('counts failures atomically and reports a missing endpoint as undefined', async () => {
      const { site, other, endpoint } = await seed(storage(), 'wh-count');
      const first = await storage().transaction((tx) => tx.webhooks.countFailure(site.id, endpoint.id, at(T0, 100)));
      assert.equal(first?.failureCount, 1);
      assert.equal(first?.updatedAt.getTime(), at(T0, 100).getTime());
      assert.equal(first?.status, 'enabled', 'counting does not change the status; the service decides it');
      await storage().transaction(async (tx) => {
        assert.equal(await tx.webhooks.countFailure(other.id, endpoint.id, T0), undefined);
        assert.equal(await tx.webhooks.countFailure(site.id, 987_654, T0), undefined);
      });
      assert.equal(
        (await storage().transaction((tx) => tx.webhooks.findEndpoint(site.id, endpoint.id)))?.failureCount,
        1,
      );
    });

    it('loses no failure among 20 concurrent countFailure calls', async () => {
      const { site, endpoint } = await seed(storage(), 'wh-race');
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          storage().transaction((tx) => tx.webhooks.countFailure(site.id, endpoint.id, at(T0, i))),
        ),
      );
      const counts = results.map((r) => r?.failureCount).sort((a, b) => (a ?? 0) - (b ?? 0));
      assert.deepEqual(
        counts,
        Array.from({ length: 20 }, (_, i) => i + 1),
        'each call sees its own increment',
      );
      const stored = await storage().transaction((tx) => tx.webhooks.findEndpoint(site.id, endpoint.id));
      assert.equal(stored?.failureCount, 20);
    });

    it('stores webhooks exactly, body byte for byte, and updates only the given fields', async () => {
      const { site, other, endpoint } = await seed(storage(), 'wh-ins');
      const webhook = await storage().transaction((tx) => tx.webhooks.insertWebhook(webhookFixture(endpoint)));
      const test = await storage().transaction((tx) =>
        tx.webhooks.insertWebhook(
          webhookFixture(endpoint, {
            eventId: null,
            eventKey: 'test',
            body: 'id=2&event=test&payload[chargify]=testing',
          }),
        ),
      );
      const { id, ...fields } = webhook;
      assert.ok(Number.isSafeInteger(id) && id > 0);
      assert.deepEqual(fields, webhookFixture(endpoint));
      assert.equal((await storage().transaction((tx) => tx.webhooks.findWebhook(site.id, test.id)))?.eventId, null);
      const sent = at(T0, 2000);
      const updated = await storage().transaction((tx) =>
        tx.webhooks.updateWebhook(site.id, webhook.id, {
          status: 'failed',
          attempts: 5,
          lastSentAt: sent,
          lastSentUrl: 'https://hooks.example.com/billing?sig=abc',
          lastError: '404 Resource Not Found (retry 5 of 5)',
          lastErrorAt: sent,
          updatedAt: sent,
        }),
      );
      assert.deepEqual(updated, {
        ...webhook,
        status: 'failed',
        attempts: 5,
        lastSentAt: sent,
        lastSentUrl: 'https://hooks.example.com/billing?sig=abc',
        lastError: '404 Resource Not Found (retry 5 of 5)',
        lastErrorAt: sent,
        updatedAt: sent,
      });
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.webhooks.findWebhook(site.id, webhook.id), updated);
        assert.equal(await tx.webhooks.findWebhook(other.id, webhook.id), undefined);
        assert.equal(await tx.webhooks.updateWebhook(other.id, webhook.id, { attempts: 9 }), undefined);
        assert.equal(await tx.webhooks.updateWebhook(site.id, 987_654, { attempts: 9 }), undefined);
      });
    });

    it('sets a webhook body after its insert (the body carries the row id)', async () => {
      const { site, endpoint } = await seed(storage(), 'wh-body');
      const body = await storage().transaction(async (tx) => {
        const inserted = await tx.webhooks.insertWebhook(webhookFixture(endpoint, { body: '' }));
        const text = `id=${inserted.id}&event=test&payload[chargify]=testing`;
        const patch: BodyPatch = { body: text };
        assert.equal((await tx.webhooks.updateWebhook(site.id, inserted.id, patch))?.body, text);
        return { id: inserted.id, text };
      });
      assert.equal((await storage().transaction((tx) => tx.webhooks.findWebhook(site.id, body.id)))?.body, body.text);
    });

    it('lists webhooks newest first with status, date, endpoint filters and pages', async () => {
      const { site, other, endpoint } = await seed(storage(), 'wh-list');
      const second = await storage().transaction((tx) =>
        tx.webhooks.insertEndpoint(endpointFixture(site, { url: 'https://b.example.com/' })),
      );
      const rows = await storage().transaction(async (tx) => {
        const out: WebhookRecord[] = [];
        for (let i = 0; i < 6; i++) {
          out.push(
            await tx.webhooks.insertWebhook(
              webhookFixture(i % 2 === 0 ? endpoint : second, {
                status: i < 2 ? 'successful' : i < 4 ? 'failed' : 'pending',
                createdAt: at(T0, i * 1000),
              }),
            ),
          );
        }
        return out;
      });
      const ids = (list: readonly WebhookRecord[]) => list.map((w) => w.id);
      const byIdDesc = [...rows].sort((a, b) => b.id - a.id);
      await storage().transaction(async (tx) => {
        const all = await tx.webhooks.listWebhooks(site.id, {}, { page: 1, perPage: 50 });
        assert.deepEqual(ids(all), ids(byIdDesc));
        assert.deepEqual(all[0], byIdDesc[0]);
        assert.deepEqual(ids(await tx.webhooks.listWebhooks(site.id, { status: 'failed' }, { page: 1, perPage: 50 })), [
          rows[3]!.id,
          rows[2]!.id,
        ]);
        assert.deepEqual(
          ids(
            await tx.webhooks.listWebhooks(
              site.id,
              { since: at(T0, 1000), until: at(T0, 3000) },
              { page: 1, perPage: 50 },
            ),
          ),
          [rows[3]!.id, rows[2]!.id, rows[1]!.id],
          'date bounds are inclusive',
        );
        assert.deepEqual(
          ids(await tx.webhooks.listWebhooks(site.id, { endpointId: second.id }, { page: 1, perPage: 50 })),
          [rows[5]!.id, rows[3]!.id, rows[1]!.id],
        );
        assert.deepEqual(
          ids(await tx.webhooks.listWebhooks(site.id, {}, { page: 2, perPage: 4 })),
          ids(byIdDesc.slice(4)),
        );
        assert.deepEqual(await tx.webhooks.listWebhooks(other.id, {}, { page: 1, perPage: 50 }), []);
      });
    });

    it('deletes an endpoint with its webhooks only, within the site', async () => {
      const { site, other, endpoint } = await seed(storage(), 'wh-del');
      const keep = await storage().transaction((tx) =>
        tx.webhooks.insertEndpoint(endpointFixture(site, { url: 'https://keep.example.com/' })),
      );
      const [gone, kept] = await storage().transaction(async (tx) => [
        await tx.webhooks.insertWebhook(webhookFixture(endpoint)),
        await tx.webhooks.insertWebhook(webhookFixture(keep)),
      ]);
      await storage().transaction(async (tx) => {
        assert.equal(await tx.webhooks.deleteEndpoint(other.id, endpoint.id), false);
        assert.equal(await tx.webhooks.deleteEndpoint(site.id, endpoint.id), true);
        assert.equal(await tx.webhooks.deleteEndpoint(site.id, endpoint.id), false);
      });
      await storage().transaction(async (tx) => {
        assert.equal(await tx.webhooks.findEndpoint(site.id, endpoint.id), undefined);
        assert.equal(await tx.webhooks.findWebhook(site.id, gone!.id), undefined);
        assert.deepEqual(await tx.webhooks.findWebhook(site.id, kept!.id), kept);
      });
    });

    it('leaves no endpoint, webhook or count behind when the transaction throws', async () => {
      const { site, endpoint } = await seed(storage(), 'wh-roll');
      await assert.rejects(
        storage().transaction(async (tx) => {
          await tx.webhooks.insertEndpoint(endpointFixture(site, { url: 'https://rolled.example.com/' }));
          await tx.webhooks.insertWebhook(webhookFixture(endpoint));
          await tx.webhooks.countFailure(site.id, endpoint.id, T0);
          throw new Abort('roll back');
        }),
        Abort,
      );
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.webhooks.listEndpoints(site.id), [endpoint]);
        assert.deepEqual(await tx.webhooks.listWebhooks(site.id, {}, { page: 1, perPage: 10 }), []);
      });
    });
  });

  describe('direct calls', () => {
    const call = (siteId: number, id: string, overrides: Partial<DirectCallRecord> = {}): DirectCallRecord => ({
      id,
      siteId,
      apiId: 'api-id-1',
      nonce: null,
      timestamp: '1700000000',
      success: false,
      request: {
        signup: { product: { handle: 'basic' }, customer: { email: 'a@b.co', reference: null } },
        redirect_uri: 'https://x.example.com/',
      },
      response: {
        result: { status_code: 422, result_code: '4220', errors: ['Email: is invalid.'] },
        meta: { nonce: null, ok: false },
      },
      createdAt: at(T0, 7),
      ...overrides,
    });

    it('stores calls exactly and finds them only within their site', async () => {
      const [site, other] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('dc-a')),
        await tx.sites.insert(newSiteFixture('dc-b')),
      ]);
      const id = 'a'.repeat(40);
      const stored = await storage().transaction((tx) =>
        tx.directCalls.insert(call(site!.id, id, { nonce: 'n-1', success: true })),
      );
      assert.deepEqual(stored, call(site!.id, id, { nonce: 'n-1', success: true }));
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.directCalls.findById(site!.id, id), stored);
        assert.equal((await tx.directCalls.findById(site!.id, id))?.success, true, 'booleans stay booleans');
        assert.equal(await tx.directCalls.findById(other!.id, id), undefined);
        assert.equal(await tx.directCalls.findById(site!.id, 'b'.repeat(40)), undefined);
      });
    });

    it('rejects a second call with the same id as a conflict', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('dc-dup')));
      const id = 'c'.repeat(40);
      await storage().transaction((tx) => tx.directCalls.insert(call(site.id, id)));
      await assert.rejects(
        storage().transaction((tx) => tx.directCalls.insert(call(site.id, id, { success: true }))),
        (error: unknown) => error instanceof BillingError && error.code === 'conflict',
      );
      assert.equal((await storage().transaction((tx) => tx.directCalls.findById(site.id, id)))?.success, false);
    });
  });

  describe('direct post claims', () => {
    const hash = (n: number) => n.toString(16).padStart(64, '0');
    const claim = (siteId: number, inputHash: string, nonceKey: string | null) =>
      storage().transaction((tx) => tx.directCalls.claimPost({ siteId, inputHash, nonceKey, at: T0 }));

    it('claims a protected post once by its signed input and once by its nonce key, per site', async () => {
      const [site, other] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('dpc-a')),
        await tx.sites.insert(newSiteFixture('dpc-b')),
      ]);
      assert.equal(await claim(site!.id, hash(1), 'api|1768478400|7n-1'), true);
      assert.equal(await claim(site!.id, hash(1), 'api|1768478400|7n-1'), false, 'the same post again');
      assert.equal(await claim(site!.id, hash(1), 'api|17684784007|n-1'), false, 'the same signed input, shifted');
      assert.equal(await claim(site!.id, hash(2), 'api|1768478400|7n-1'), false, 'the same nonce key, other data');
      assert.equal(await claim(site!.id, hash(2), 'api|1768478400|7n-2'), true);
      assert.equal(await claim(other!.id, hash(1), 'api|1768478400|7n-1'), true, 'another site has its own claims');
      assert.equal(await claim(site!.id, hash(1), 'API|1768478400|7n-1'), false, 'the input hash alone refuses');
      assert.equal(await claim(site!.id, hash(3), 'API|1768478400|7n-1'), true, 'nonce keys are case-sensitive');
    });

    it("lets unprotected claims repeat, but never over a protected claim's signed input, nor the other way", async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('dpc-open')));
      assert.equal(await claim(site.id, hash(10), null), true);
      assert.equal(await claim(site.id, hash(10), null), true, 'a post without a nonce may repeat');
      assert.equal(await claim(site.id, hash(10), 'api|1|n'), false, 'its signed input was used unprotected');
      assert.equal(await claim(site.id, hash(11), 'api|1|n'), true, 'the nonce key was not spent by the refusal');
      assert.equal(await claim(site.id, hash(11), null), false, "a protected post's signed input without a nonce");
      assert.equal(await claim(site.id, hash(12), null), true);
    });

    it('rolls a claim back with its transaction, and keeps claims when the site data is cleared', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('dpc-roll')));
      await assert.rejects(
        storage().transaction(async (tx) => {
          assert.equal(
            await tx.directCalls.claimPost({ siteId: site.id, inputHash: hash(20), nonceKey: 'k', at: T0 }),
            true,
          );
          throw new Abort('roll back');
        }),
        Abort,
      );
      assert.equal(await claim(site.id, hash(20), 'k'), true, 'nothing of the rolled-back claim is left');
      await storage().transaction((tx) => tx.siteData.clear(site.id, 'all'));
      assert.equal(await claim(site.id, hash(20), 'k2'), false, 'a cleared site still refuses a spent input');
      assert.equal(await claim(site.id, hash(21), 'k'), false, 'and a spent nonce key');
    });

    it('gives exactly one of concurrent protected claims of one input or one nonce key, and never both kinds', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('dpc-race')));
      const sameInput = await Promise.all(Array.from({ length: 10 }, (_, i) => claim(site.id, hash(30), `k-${i}`)));
      assert.equal(sameInput.filter(Boolean).length, 1);
      const sameNonce = await Promise.all(Array.from({ length: 10 }, (_, i) => claim(site.id, hash(40 + i), 'k-same')));
      assert.equal(sameNonce.filter(Boolean).length, 1);
      const mixed = await Promise.all([
        claim(site.id, hash(60), null),
        claim(site.id, hash(60), 'k-mixed'),
        claim(site.id, hash(60), null),
        claim(site.id, hash(60), null),
      ]);
      const [, protectedWon, ...open] = mixed;
      const openWon = [mixed[0], ...open].filter(Boolean).length;
      assert.ok(protectedWon ? openWon === 0 : openWon === 3, `protected ${protectedWon}, unprotected ${openWon}`);
    });
  });
}
