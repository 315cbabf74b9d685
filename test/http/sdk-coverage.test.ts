import { createBillingEngine } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { PatternRouter } from 'hono/router/pattern-router';
import { describe, expect, it } from 'vitest';
import { createHttpApp } from '../../examples/http/create-http-app.js';
import { KNOWN_UNSERVED_PATHS } from '../../examples/http/routes/method-routes.js';
import { SDK_LEFT_OUT } from './sdk-coverage-left-out.js';
import { type SdkEndpoint, sdkEndpoints } from './support/sdk-endpoints.js';

/**
 * Which endpoints of the official SDK the app serves, found by matching each SDK method's HTTP
 * method and path (read from the SDK's controller sources) against the app's own route table.
 * A match only counts when no literal segment of the SDK's path lands on a parameter of the route
 * (`/customers/lookup.json` on `/customers/:id.json` is a misleading 404, not a lookup).
 * The endpoints left out are listed, each with its reason, in `sdk-coverage-left-out.ts`: the
 * test fails when a served endpoint stops being served and when the list names one that now is.
 */

/** Sample values of path parameters that are not ids. */
const SAMPLE_PARAMS: Readonly<Record<string, string>> = { resourceType: 'subscriptions', apiHandle: 'api-calls' };

/** The SDK path with a sample value for each parameter, as a request would carry it. */
function concretePath(endpoint: SdkEndpoint): string {
  return endpoint.template.replace(/\{(\w+)\}/g, (_, name: string) => SAMPLE_PARAMS[name] ?? '1');
}

/** Whether a literal segment of the SDK's path is taken by a parameter of the route (a shadowing match). */
function shadowed(template: string, route: string): boolean {
  const sdk = template.split('/');
  const ours = route.split('/');
  return sdk.some((segment, i) => !segment.includes('{') && (ours[i] ?? '').startsWith(':'));
}

function servedRoutes() {
  const app = createHttpApp({ engine: createBillingEngine({ storage: createMemoryStorage() }), compat: 'chargify' });
  const router = new PatternRouter<string>();
  // Middleware (`app.use`) is registered for every method; only routes answer requests.
  for (const route of app.routes) if (route.method !== 'ALL') router.add(route.method, route.path, route.path);
  return (endpoint: SdkEndpoint): { served: boolean; route?: string } => {
    const [matches] = router.match(endpoint.method, concretePath(endpoint));
    const first = matches[0]?.[0];
    // Paths the app names only to say that it does not serve them yet.
    if (first === undefined || KNOWN_UNSERVED_PATHS[first]?.method === endpoint.method) return { served: false };
    return { served: !shadowed(endpoint.template, first), route: first };
  };
}

describe('official SDK coverage', () => {
  const endpoints = sdkEndpoints();
  const match = servedRoutes();
  const results = endpoints.map((endpoint) => ({ endpoint, ...match(endpoint) }));
  const served = results.filter((r) => r.served);
  const leftOut = results.filter((r) => !r.served);

  it('reads every method of every controller of the SDK', () => {
    // SDK 6.1.0 has 233 endpoints in 33 controllers; a different count means the SDK changed.
    expect(endpoints).toHaveLength(233);
    expect(new Set(endpoints.map((e) => e.name)).size).toBe(endpoints.length);
    console.log(
      `SDK coverage: ${served.length} of ${endpoints.length} endpoints served, ${leftOut.length} left out (see sdk-coverage-left-out.ts).`,
    );
  });

  it('leaves out exactly the endpoints the checked-in list names, each with a reason', () => {
    const listed = Object.keys(SDK_LEFT_OUT).sort();
    const actual = leftOut.map((r) => r.endpoint.name).sort();
    // A name only in `actual` is a served endpoint that regressed (or a new SDK method); a name
    // only in `listed` is now served, so the list is stale.
    expect({ missingFromList: actual.filter((n) => !listed.includes(n)) }).toEqual({ missingFromList: [] });
    expect({ servedButListed: listed.filter((n) => !actual.includes(n)) }).toEqual({ servedButListed: [] });
    for (const [name, reason] of Object.entries(SDK_LEFT_OUT)) {
      expect(reason.trim().length, `${name} needs a reason`).toBeGreaterThan(10);
    }
  });

  it('serves the endpoints this round added, each by a route of its own', () => {
    const byName = new Map(results.map((r) => [r.endpoint.name, r]));
    const added: Record<string, string> = {
      'EventsController.listEvents': '/events.json',
      'EventsController.listSubscriptionEvents': '/subscriptions/:id/events.json',
      'EventsController.readEventsCount': '/events/count.json',
      'CustomersController.readCustomerByReference': '/customers/lookup.json',
      'CustomersController.listCustomerSubscriptions': '/customers/:id/subscriptions.json',
      'SubscriptionStatusController.retrySubscription': '/subscriptions/:id/retry.json',
      'SubscriptionStatusController.updateAutomaticSubscriptionResumption': '/subscriptions/:id/hold.json',
      'SubscriptionsController.activateSubscription': '/subscriptions/:id/activate.json',
      'ProductsController.listProducts': '/products.json',
      'ComponentsController.listComponents': '/components.json',
      'ComponentsController.findComponent': '/components/lookup.json',
      'ComponentsController.updateComponent': '/components/:id{[^/]+\\.json}',
      'CouponsController.listCouponsForProductFamily': '/product_families/:id/coupons.json',
      'CouponsController.readCoupon': '/product_families/:fid/coupons/:id{[^/]+\\.json}',
      'CouponsController.updateCoupon': '/product_families/:fid/coupons/:id{[^/]+\\.json}',
      'CouponsController.archiveCoupon': '/product_families/:fid/coupons/:id{[^/]+\\.json}',
      'SitesController.readSite': '/site.json',
    };
    for (const [name, route] of Object.entries(added)) {
      expect(byName.get(name), name).toMatchObject({ served: true, route });
    }
  });
});
