import { createServer, type Server } from 'node:http';
import {
  ApiError,
  type Client,
  ComponentsController,
  CreditType,
  CustomersController,
  IntervalUnit,
  PricingScheme,
  ProductFamiliesController,
  ProductsController,
  SubscriptionComponentsController,
  SubscriptionStateFilter,
  SubscriptionStatusController,
  SubscriptionsController,
  WebhookStatus,
  WebhookSubscription,
  WebhooksController,
} from '@maxio-com/advanced-billing-sdk';
import { type BillingEngine, createBillingEngine } from 'billing-engine';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type HttpFixture, useHttpFixture } from './support/http-fixture.js';
import { maxioClient, sdk } from './support/maxio-sdk.js';

/**
 * The official Maxio SDK (6.1.0) against our server in `chargify` compat: every call goes over
 * real HTTP through the SDK's own axios and is validated by the SDK's own response schemas, so a
 * response shape the SDK cannot parse fails here as a ResponseValidationError.
 */

function client(f: HttpFixture, key = f.keys.acme): Client {
  return maxioClient({ port: f.port, site: 'acme', apiKey: key });
}

/** A family and a 10.00-a-month product created through the SDK. */
async function catalogViaSdk(c: Client) {
  const family = await sdk(
    new ProductFamiliesController(c).createProductFamily({
      productFamily: { name: 'Acme Projects', handle: 'acme-projects', description: 'Projects' },
    }),
  );
  expect(family.productFamily?.handle).toBe('acme-projects');
  const familyId = family.productFamily?.id;
  expect(typeof familyId).toBe('number');
  const product = await sdk(
    new ProductsController(c).createProduct(String(familyId), {
      product: {
        name: 'Pro',
        handle: 'pro',
        description: 'Pro plan',
        priceInCents: BigInt(1000),
        interval: 1,
        intervalUnit: IntervalUnit.Month,
      },
    }),
  );
  expect(product.product.handle).toBe('pro');
  expect(product.product.priceInCents).toBe(BigInt(1000));
  return { familyId: familyId as number, productId: product.product.id as number };
}

describe('official Maxio SDK 6.1.0 against the chargify-compat server', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('creates the catalog, a customer and subscriptions, reads, lists, updates and cancels them', async () => {
    const f = fixture();
    const c = client(f);
    const { productId } = await catalogViaSdk(c);

    const customer = await sdk(
      new CustomersController(c).createCustomer({
        customer: {
          firstName: 'Ada',
          lastName: 'Lovelace',
          email: 'ada@example.com',
          organization: 'Analytical Engines',
          reference: 'ada-1',
        },
      }),
    );
    expect(customer.customer.email).toBe('ada@example.com');
    expect(customer.customer.reference).toBe('ada-1');
    const customerId = customer.customer.id as number;

    const subscriptions = new SubscriptionsController(c);
    // Expiry as JSON numbers, as real-clients §3 row 9 records the SDK passing them through.
    const created = await sdk(
      subscriptions.createSubscription({
        subscription: {
          productHandle: 'pro',
          customerId,
          creditCardAttributes: { fullNumber: '4111111111111111', expirationMonth: 11, expirationYear: 2028 },
        },
      }),
    );
    const sub = created.subscription;
    expect(sub?.state).toBe('active');
    expect(sub?.customer?.id).toBe(customerId);
    expect(sub?.product?.id).toBe(productId);
    expect(sub?.product?.handle).toBe('pro');
    expect(sub?.creditCard?.maskedCardNumber).toMatch(/1111$/);
    expect(sub?.creditCard?.cardType).toBe('visa');
    expect(sub?.balanceInCents).toBe(BigInt(0));
    expect(typeof sub?.signupPaymentId).toBe('number');
    const id = sub?.id as number;

    const read = await sdk(subscriptions.readSubscription(id));
    expect(read.subscription?.id).toBe(id);
    expect(read.subscription?.productPriceInCents).toBe(BigInt(1000));

    // A second one, canceled below, so that the state filter has something to leave out.
    const second = await sdk(
      subscriptions.createSubscription({
        subscription: {
          productId,
          customerAttributes: { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com' },
          creditCardAttributes: { fullNumber: '4111111111111111', expirationMonth: '12', expirationYear: '2029' },
        },
      }),
    );
    const secondId = second.subscription?.id as number;

    const nextBilling = new Date(Date.parse(f.clock.now().toISOString()) + 40 * 86_400_000).toISOString();
    const moved = await sdk(subscriptions.updateSubscription(id, { subscription: { nextBillingAt: nextBilling } }));
    const assessed = Date.parse(moved.subscription?.nextAssessmentAt ?? '');
    expect(Math.abs(assessed - Date.parse(nextBilling))).toBeLessThanOrEqual(60_000);

    const recarded = await sdk(
      subscriptions.updateSubscription(id, {
        subscription: {
          creditCardAttributes: { fullNumber: '5555555555554444', expirationMonth: '10', expirationYear: '2030' },
        },
      }),
    );
    expect(recarded.subscription?.creditCard?.maskedCardNumber).toMatch(/4444$/);
    expect(recarded.subscription?.creditCard?.cardType).toBe('master');
    expect(recarded.subscription?.creditCard?.expirationYear).toBe(2030);

    const canceled = await sdk(
      new SubscriptionStatusController(c).cancelSubscription(secondId, {
        subscription: { cancellationMessage: 'Moving on' },
      }),
    );
    expect(canceled.subscription?.state).toBe('canceled');
    expect(canceled.subscription?.cancellationMessage).toBe('Moving on');
    expect(typeof canceled.subscription?.canceledAt).toBe('string');

    const active = await sdk(
      subscriptions.listSubscriptions({ state: SubscriptionStateFilter.Active, page: 1, perPage: 200 }),
    );
    expect(active.map((s) => s.subscription?.id)).toEqual([id]);
    const canceledList = await sdk(subscriptions.listSubscriptions({ state: SubscriptionStateFilter.Canceled }));
    expect(canceledList.map((s) => s.subscription?.id)).toEqual([secondId]);
    const page1 = await sdk(subscriptions.listSubscriptions({ page: 1, perPage: 1 }));
    const page2 = await sdk(subscriptions.listSubscriptions({ page: 2, perPage: 1 }));
    const page3 = await sdk(subscriptions.listSubscriptions({ page: 3, perPage: 1 }));
    expect(page1).toHaveLength(1);
    expect(page2).toHaveLength(1);
    expect(page3).toEqual([]);
    expect(new Set([page1[0]?.subscription?.id, page2[0]?.subscription?.id])).toEqual(new Set([id, secondId]));
  });

  it('gets an ApiError with status 401 for a wrong key', async () => {
    const f = fixture();
    const wrong = client(f, 'wrong-key');
    const error = await new SubscriptionsController(wrong).readSubscription(1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).statusCode).toBe(401);
  });
});

describe('official Maxio SDK 6.1.0: components, allocations, usage and webhooks', () => {
  // Loopback receivers are allowed on the app's engine (a development-only option), so that a
  // webhook can be delivered to 127.0.0.1 and its sent form read back through the SDK.
  let appEngine: BillingEngine;
  const fixture = useHttpFixture({
    compat: 'chargify',
    wrapEngine: (engine) => {
      appEngine = createBillingEngine({
        storage: engine.storage,
        clock: engine.clock,
        gateway: engine.gateway,
        webhooks: { allowLocalReceivers: true },
      });
      return appEngine;
    },
  });
  let receiver: Server;
  let receiverUrl: string;
  beforeEach(async () => {
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const address = receiver.address();
    if (address === null || typeof address === 'string') throw new Error('receiver has no TCP address');
    receiverUrl = `http://127.0.0.1:${address.port}/hooks`;
  });
  afterEach(async () => {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  it('parses every allocation, usage and subscription component answer', async () => {
    const f = fixture();
    const c = client(f);
    const { familyId } = await catalogViaSdk(c);
    const componentsApi = new ComponentsController(c);
    const seats = await sdk(
      componentsApi.createQuantityBasedComponent(String(familyId), {
        quantityBasedComponent: {
          name: 'Seats',
          unitName: 'seat',
          handle: 'seats',
          pricingScheme: PricingScheme.PerUnit,
          unitPrice: '5.00',
        },
      }),
    );
    const seatsId = seats.component.id as number;
    const support = await sdk(
      componentsApi.createOnOffComponent(String(familyId), { onOffComponent: { name: 'Support', unitPrice: '20' } }),
    );
    const supportId = support.component.id as number;
    const calls = await sdk(
      componentsApi.createMeteredComponent(String(familyId), {
        meteredComponent: {
          name: 'API calls',
          unitName: 'call',
          pricingScheme: PricingScheme.PerUnit,
          unitPrice: '0.01',
        },
      }),
    );
    const callsId = calls.component.id as number;

    // Signup with components, as real-clients §3 row 8 sends them.
    const created = await sdk(
      new SubscriptionsController(c).createSubscription({
        subscription: {
          productHandle: 'pro',
          customerAttributes: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
          creditCardAttributes: { fullNumber: '4111111111111111', expirationMonth: '12', expirationYear: '2030' },
          components: [{ componentId: seatsId, allocatedQuantity: 3 }],
        },
      }),
    );
    const id = created.subscription?.id as number;
    const api = new SubscriptionComponentsController(c);

    const allocated = await sdk(
      api.allocateComponent(id, seatsId, {
        allocation: { quantity: 5, memo: 'Two more', upgradeCharge: CreditType.Prorated, accrueCharge: false },
      }),
    );
    expect(allocated.allocation).toMatchObject({
      componentId: seatsId,
      subscriptionId: id,
      quantity: 5,
      previousQuantity: 3,
      memo: 'Two more',
      prorationUpgradeScheme: 'prorate-attempt-capture',
      upgradeCharge: CreditType.Prorated,
    });
    expect(allocated.allocation?.payment?.amountInCents).toBe(BigInt(1000));
    expect(allocated.allocation?.payment?.success).toBe(true);

    const bulk = await sdk(
      api.allocateComponents(id, {
        accrueCharge: true,
        allocations: [
          { componentId: seatsId, quantity: 4 },
          { componentId: supportId, quantity: 1 },
        ],
      }),
    );
    expect(bulk.map((a) => [a.allocation?.componentId, a.allocation?.quantity])).toEqual([
      [seatsId, 4],
      [supportId, 1],
    ]);

    const preview = await sdk(api.previewAllocations(id, { allocations: [{ componentId: seatsId, quantity: 6 }] }));
    expect(preview.allocationPreview.periodType).toBe('prorated');
    expect(preview.allocationPreview.totalInCents).toBe(BigInt(1000));
    expect(preview.allocationPreview.lineItems?.[0]?.amountInCents).toBe(BigInt(1000));

    const history = await sdk(api.listAllocations(id, seatsId, 1));
    expect(history.map((a) => a.allocation?.quantity)).toEqual([4, 5]);

    const t14 = await api.allocateComponent(id, supportId, { allocation: { quantity: 50 } }).catch((e: unknown) => e);
    expect(t14).toBeInstanceOf(ApiError);
    expect((t14 as ApiError).statusCode).toBe(422);
    expect((t14 as ApiError<{ errors: unknown[] }>).result?.errors).toEqual([
      {
        kind: 'allocation',
        component_id: supportId,
        on: 'quantity',
        message: 'Quantity: must be either 1 (on) or 0 (off).',
      },
    ]);

    const usage = await sdk(api.createUsage(id, callsId, { usage: { quantity: 40, memo: 'batch' } }));
    expect(usage.usage).toMatchObject({ quantity: 40, memo: 'batch', componentId: callsId, subscriptionId: id });
    expect(typeof usage.usage.id).toBe('bigint');
    const usages = await sdk(api.listUsages({ subscriptionId: id, componentId: callsId, perPage: 10 }));
    expect(usages.map((u) => u.usage.quantity)).toEqual([40]);

    const listed = await sdk(api.listSubscriptionComponents({ subscriptionId: id }));
    expect(
      listed.map((item) => [
        item.component?.componentId,
        item.component?.allocatedQuantity,
        item.component?.unitBalance,
      ]),
    ).toEqual([
      [seatsId, 4, 0],
      [supportId, 1, 0],
      [callsId, 0, 40],
    ]);
    expect(listed[1]?.component?.enabled).toBe(true);
    expect(listed[0]?.component?.pricingScheme).toBe(PricingScheme.PerUnit);
    const one = await sdk(api.readSubscriptionComponent(id, supportId));
    expect(one.component?.kind).toBe('on_off_component');
  });

  it('parses every endpoint and webhook answer, before and after delivery', async () => {
    const f = fixture();
    const c = client(f);
    await catalogViaSdk(c);
    const webhooksApi = new WebhooksController(c);
    const created = await sdk(
      webhooksApi.createEndpoint({
        endpoint: { url: receiverUrl, webhookSubscriptions: [WebhookSubscription.SignupSuccess] },
      }),
    );
    expect(created.endpoint?.url).toBe(receiverUrl);
    expect(created.endpoint?.status).toBe('enabled');
    const endpointId = created.endpoint?.id as number;
    const listed = await sdk(webhooksApi.listEndpoints());
    expect(listed.map((e) => [e.id, e.url, e.webhookSubscriptions])).toEqual([
      [endpointId, receiverUrl, ['signup_success']],
    ]);
    const updated = await sdk(
      webhooksApi.updateEndpoint(endpointId, {
        endpoint: {
          url: receiverUrl,
          webhookSubscriptions: [WebhookSubscription.SignupSuccess, WebhookSubscription.PaymentSuccess],
        },
      }),
    );
    expect(updated.endpoint?.webhookSubscriptions).toEqual(['signup_success', 'payment_success']);
    const bad = await webhooksApi
      .createEndpoint({
        endpoint: { url: 'http://10.0.0.1/x', webhookSubscriptions: [WebhookSubscription.SignupSuccess] },
      })
      .catch((e: unknown) => e);
    expect((bad as ApiError).statusCode).toBe(422);

    await sdk(
      new SubscriptionsController(c).createSubscription({
        subscription: {
          productHandle: 'pro',
          customerAttributes: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
          creditCardAttributes: { fullNumber: '4111111111111111', expirationMonth: '12', expirationYear: '2030' },
        },
      }),
    );
    // Pending: never sent, so the delivery fields are null, which the SDK must accept.
    const pending = await sdk(webhooksApi.listWebhooks({ status: WebhookStatus.Pending }));
    expect(pending.map((w) => w.webhook?.event).sort()).toEqual(['payment_success', 'signup_success']);
    expect(pending[0]?.webhook?.acceptedAt).toBeNull();
    // `last_sent_at` is `optional(string())` in the SDK: it takes our null and hands on undefined.
    expect(pending[0]?.webhook?.lastSentAt).toBeUndefined();

    await appEngine.deliverWebhooks();
    const delivered = await sdk(webhooksApi.listWebhooks({ status: WebhookStatus.Successful, page: 1, perPage: 10 }));
    expect(delivered).toHaveLength(2);
    expect(delivered.every((w) => w.webhook?.successful === true)).toBe(true);
    expect(typeof delivered[0]?.webhook?.lastSentAt).toBe('string');
    expect(delivered[0]?.webhook?.lastSentUrl).toBe(receiverUrl);
    expect(typeof delivered[0]?.webhook?.id).toBe('bigint');

    const replayed = await sdk(webhooksApi.replayWebhooks({ ids: [delivered[0]?.webhook?.id as bigint] }));
    expect(replayed.status).toBe('ok');
  });
});
