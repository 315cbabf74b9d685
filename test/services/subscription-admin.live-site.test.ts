/**
 * A signup preview on a live site of an engine without a gateway: the commands' storage refuses a
 * live site's payments there, but a preview charges nothing, so on the storage the engine passes
 * as `previewStorage` it prices the signup; without it, it is refused as the signup would be.
 */
import {
  createTestGateway,
  LIVE_SITE_NEEDS_GATEWAY_MESSAGE,
  ManualClock,
  refusingLiveSitePayments,
} from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { describe, expect, it } from 'vitest';
import { CatalogService } from '../../src/services/catalog-service.js';
import { SiteService } from '../../src/services/site-service.js';
import { SubscriptionAdminService } from '../../src/services/subscription-admin-service.js';
import type { SubscriptionDeps } from '../../src/services/subscription-service.js';
import { rejection } from '../support/engine-harness.js';

describe('signup preview on a live site of an engine without a gateway', () => {
  it('prices on the unguarded preview storage, and is refused like the signup without it', async () => {
    const storage = createMemoryStorage();
    const deps: SubscriptionDeps = {
      storage: refusingLiveSitePayments(storage),
      clock: new ManualClock('2026-03-02T10:00:00Z'),
      gateway: createTestGateway(),
      emitter: { emit: () => {} },
    };
    await new SiteService(deps).create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC', mode: 'live' });
    const catalog = new CatalogService(deps);
    const family = await catalog.createFamily('acme', { name: 'Plans' });
    await catalog.createProduct('acme', family.id, {
      name: 'Basic',
      handle: 'basic',
      priceInCents: 1000,
      interval: 1,
      intervalUnit: 'month',
    });

    const priced = await new SubscriptionAdminService(deps, { previewStorage: storage }).previewSignup('acme', {
      productHandle: 'basic',
    });
    expect(priced.currentBillingManifest.totalInCents).toBe(1000);
    const refused = await rejection(
      new SubscriptionAdminService(deps).previewSignup('acme', { productHandle: 'basic' }),
    );
    expect(refused.code).toBe('gateway_error');
    expect(refused.message).toBe(LIVE_SITE_NEEDS_GATEWAY_MESSAGE);
    await storage.transaction(async (tx) => {
      const site = await tx.sites.findBySubdomain('acme');
      expect(await tx.siteData.counts(site!.id)).toEqual({ customers: 0, subscriptions: 0, transactions: 0 });
    });
  });
});
