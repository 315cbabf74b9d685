import { SubscriptionsController } from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk, sdkBasicProduct, sdkFailure } from './support/maxio-sdk.js';

type Sub = { subscription: Record<string, unknown> };

/** The signup with `currency` over HTTP (main API and the official SDK), and the `currency` subscriptions show. */
describe('signup currency over HTTP', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  /** The signup body of `pro` with `currency` in the subscription wrapper. */
  const withCurrency = (currency: unknown) => {
    const base = signupBody() as Sub;
    return { subscription: { ...base.subscription, currency } };
  };

  it("signs up in the site's currency and shows it; another currency is a 422 that creates nothing", async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const refused = await f.as('acme', { method: 'POST', path: '/subscriptions.json', json: withCurrency('EUR') });
    expect([refused.status, refused.json()]).toEqual([
      422,
      { errors: ['Currency: EUR is not defined on the site; subscriptions on this site are billed in USD.'] },
    ]);
    const preview = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions/preview.json',
      json: withCurrency('gbp'),
    });
    expect(preview.status).toBe(422);
    expect((await f.as('acme', { path: '/customers.json' })).json()).toEqual([]);
    expect((await f.as('acme', { path: '/subscriptions.json' })).json()).toEqual([]);
    expect(f.gateway.chargeCalls).toBe(0);

    const created = await f.as('acme', { method: 'POST', path: '/subscriptions.json', json: withCurrency('usd') });
    expect(created.status, created.text).toBe(201);
    const id = created.json<Sub>().subscription.id as number;
    expect(created.json<Sub>().subscription.currency).toBe('USD');
    const read = await f.as('acme', { path: `/subscriptions/${id}.json` });
    expect(read.json<Sub>().subscription.currency).toBe('USD');

    // A site in another currency shows its own.
    await seedCatalog(f.engine, 'globex');
    const euro = await f.as('globex', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    expect(euro.json<Sub>().subscription.currency).toBe('EUR');
    const bad = await f.as('globex', { method: 'POST', path: '/subscriptions.json', json: withCurrency(42) });
    expect(bad.status).toBe(422);
  });

  it('takes the SDK signup with currency, and the SDK reads the subscription currency', async () => {
    const f = fixture();
    const c = acmeClient(f);
    await sdkBasicProduct(c);
    const subscriptions = new SubscriptionsController(c);
    const body = (currency: string, email: string) => ({
      subscription: {
        productHandle: 'basic',
        currency,
        customerAttributes: { firstName: 'Ada', lastName: 'Lovelace', email },
        creditCardAttributes: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
      },
    });
    const refused = await sdkFailure(subscriptions.createSubscription(body('EUR', 'ada@example.com')));
    expect(refused).toEqual({
      status: 422,
      body: { errors: ['Currency: EUR is not defined on the site; subscriptions on this site are billed in USD.'] },
    });
    const created = await sdk(subscriptions.createSubscription(body('USD', 'ada@example.com')));
    expect(created.subscription?.currency).toBe('USD');
    const read = await sdk(subscriptions.readSubscription(created.subscription?.id as number));
    expect(read.subscription?.currency).toBe('USD');
  });
});
