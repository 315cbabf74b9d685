import {
  type AllocationRecord,
  BillingError,
  type ComponentRecord,
  type SubscriptionComponentView,
  type WebhookEndpointRecord,
  type WebhookView,
} from 'billing-engine';
import { describe, expect, it } from 'vitest';
import {
  allocationJson,
  createSubscriptionRequest,
  endpointJson,
  endpointRequest,
  endpointUpdateRequest,
  parseAllocationList,
  parseAllocationRequest,
  parseWireParams,
  parseWireRequest,
  replayIdsOf,
  serializeAllocationPreview,
  serializeSubscriptionComponent,
  serializeUsage,
  usageListQuery,
  usageRequest,
  webhookJson,
  webhookListQuery,
} from '../../src/wire/index.js';
import { subscriptionView } from './support/records.js';

const NEW_YORK = { timeZone: 'America/New_York', currency: 'USD' } as const;
const AT = new Date('2026-01-15T12:00:00.250Z');

function rejection(run: () => unknown): BillingError {
  try {
    run();
  } catch (error) {
    if (error instanceof BillingError) return error;
    throw error;
  }
  throw new Error('expected a BillingError');
}

/** The JSON body an HTTP binding would write for a rejection. */
function errorsOf(run: () => unknown): unknown {
  const error = rejection(run);
  return error.shape === 'objects'
    ? error.details.map((d) => ({ ...d.extra, message: d.message }))
    : error.details.map((d) => d.message);
}

const allocation: AllocationRecord = {
  id: 41,
  siteId: 1,
  subscriptionId: 31,
  componentId: 8,
  previousQuantity: 2,
  quantity: 5,
  memo: null,
  upgradeCharge: 'full',
  downgradeCredit: 'full',
  accrueCharge: true,
  createdAt: AT,
};

const component: ComponentRecord = {
  id: 8,
  siteId: 1,
  familyId: 3,
  kind: 'on_off_component',
  name: 'Support',
  handle: 'support',
  unitName: 'on/off',
  description: null,
  taxable: false,
  currentVersion: 2,
  archivedAt: null,
  createdAt: AT,
  updatedAt: AT,
};

describe('allocation requests', () => {
  it('reads one allocation, numbers and strings alike, and drops a component_id the path overrides', () => {
    expect(
      parseAllocationRequest(
        {
          allocation: {
            component_id: 99,
            quantity: '3',
            memo: 'm',
            accrue_charge: 'false',
            upgrade_charge: 'full',
            downgrade_credit: null,
            proration_upgrade_scheme: 'no-prorate',
            payment_collection_method: 'automatic',
          },
        },
        8,
      ),
    ).toEqual({
      quantity: '3',
      memo: 'm',
      accrueCharge: false,
      upgradeCharge: 'full',
      prorationUpgradeScheme: 'no-prorate',
    });
  });

  it('answers every problem at once in the allocation object shape of the path component', () => {
    expect(
      errorsOf(() =>
        parseAllocationRequest(
          {
            allocation: {
              payment_collection_method: 'invoice',
              initiate_dunning: true,
              billing_schedule: { initiate_billing_at: '2026-02-01' },
            },
          },
          8,
        ),
      ),
    ).toEqual([
      { kind: 'allocation', component_id: 8, on: 'quantity', message: 'Quantity: cannot be blank.' },
      {
        kind: 'allocation',
        component_id: 8,
        on: 'payment_collection_method',
        message:
          "Payment collection method: must be 'automatic'; other collection methods are not supported by this server yet.",
      },
      {
        kind: 'allocation',
        component_id: 8,
        on: 'initiate_dunning',
        message: 'Initiate dunning: dunning on a failed allocation payment is not supported by this server yet.',
      },
      {
        kind: 'allocation',
        component_id: 8,
        on: 'billing_schedule',
        message: 'Billing schedule: is not supported by this server yet.',
      },
    ]);
    expect(errorsOf(() => parseAllocationRequest([], 8))).toEqual([
      {
        kind: 'allocation',
        component_id: 8,
        on: 'allocation',
        message: 'Request body: must be a JSON object with a "allocation" object, like {"allocation":{...}}.',
      },
    ]);
  });

  it('reads a bulk list with top-level defaults that each entry may override', () => {
    expect(
      parseAllocationList({
        upgrade_charge: 'none',
        accrue_charge: true,
        proration_downgrade_scheme: 'no-prorate',
        allocations: [
          { component_id: '8', quantity: 1 },
          { component_id: 9, quantity: 2, accrue_charge: false, upgrade_charge: null },
        ],
      }),
    ).toEqual([
      {
        componentId: 8,
        quantity: 1,
        upgradeCharge: 'none',
        accrueCharge: true,
        prorationDowngradeScheme: 'no-prorate',
      },
      {
        componentId: 9,
        quantity: 2,
        upgradeCharge: 'none',
        accrueCharge: false,
        prorationDowngradeScheme: 'no-prorate',
      },
    ]);
  });

  it('names each bulk entry problem by its component, and refuses an entry without one plainly', () => {
    expect(
      errorsOf(() =>
        parseAllocationList({
          allocations: [
            { component_id: 8, quantity: [] },
            { component_id: 9, quantity: 1, price_point_id: 4 },
          ],
        }),
      ),
    ).toEqual([
      { kind: 'allocation', component_id: 8, on: 'quantity', message: 'Quantity: is not a number.' },
      {
        kind: 'allocation',
        component_id: 9,
        on: 'price_point_id',
        message: 'Price point id: is not supported by this server yet.',
      },
    ]);
    expect(errorsOf(() => parseAllocationList({ allocations: [{ quantity: 1 }] }))).toEqual([
      'Component: cannot be blank.',
    ]);
    expect(rejection(() => parseAllocationList({ allocations: {} })).httpStatus).toBe(422);
    expect(
      errorsOf(() => parseAllocationList({ effective_proration_date: 'x', allocations: [{}] }, { preview: true })),
    ).toEqual(['Effective proration date: is not supported by this server yet.']);
    // Outside a preview the date is not the list's concern.
    expect(
      parseAllocationList({ effective_proration_date: 'x', allocations: [{ component_id: 1, quantity: 0 }] }),
    ).toHaveLength(1);
  });

  it('reads usages and their list query', () => {
    expect(parseWireRequest(usageRequest, { usage: { quantity: 4, memo: 'x', price_point_id: null } })).toEqual({
      quantity: 4,
      memo: 'x',
    });
    expect(rejection(() => parseWireRequest(usageRequest, { usage: { memo: 'x' } })).messages).toEqual([
      'Quantity: cannot be blank.',
    ]);
    expect(parseWireParams(usageListQuery, { since_id: '', max_id: '9', per_page: '500', page: 'x' })).toEqual({
      page: 1,
      perPage: 200,
      maxId: 9,
    });
    expect(
      rejection(() => parseWireParams(usageListQuery, { since_id: 'abc', until_date: '2026-01-01' })).messages,
    ).toEqual(['Since id: must be a positive whole number.', 'Until date: is not supported by this server yet.']);
  });

  it('reads signup components by id, digits or handle, with the on/off flag as a quantity', () => {
    const read = (components: unknown) =>
      parseWireRequest(createSubscriptionRequest, { subscription: { product_handle: 'pro', components } });
    expect(
      read([
        { component_id: 8, allocated_quantity: '3' },
        { component_id: '9', enabled: false },
        { component_id: 'handle:support', enabled: 'true', quantity: 2 },
        { component_id: 'calls', unit_balance: 10 },
      ]).components,
    ).toEqual([
      { componentId: 8, allocatedQuantity: '3' },
      { componentId: 9, allocatedQuantity: 0 },
      { handle: 'support', quantity: 2 },
      { handle: 'calls', unitBalance: 10 },
    ]);
    expect(read([]).components).toBeUndefined();
    expect(
      rejection(() => read([{ component_id: 'handle:', custom_price: { prices: [] } }, { component_id: {} }])).messages,
    ).toEqual([
      'Component id: must be a component id or handle:<handle>.',
      'Custom price: is not supported by this server yet.',
      'Component id: must be a component id or handle:<handle>.',
    ]);
    expect(rejection(() => read('seats')).messages).toEqual(['Components: must be a list of components.']);
  });
});

describe('allocation serializers', () => {
  it('writes the classic scheme names of what the allocation recorded, UTC timestamp and site-zone created_at', () => {
    expect(allocationJson(allocation, NEW_YORK)).toEqual({
      allocation_id: 41,
      component_id: 8,
      subscription_id: 31,
      quantity: 5,
      previous_quantity: 2,
      memo: null,
      timestamp: '2026-01-15T12:00:00Z',
      created_at: '2026-01-15T07:00:00-05:00',
      proration_upgrade_scheme: 'full-price-delay-capture',
      // A full credit has no classic downgrade scheme.
      proration_downgrade_scheme: null,
      accrue_charge: true,
      upgrade_charge: 'full',
      downgrade_credit: 'full',
    });
    const none = allocationJson({ ...allocation, upgradeCharge: 'none', downgradeCredit: 'prorated' }, NEW_YORK);
    expect([none.proration_upgrade_scheme, none.proration_downgrade_scheme]).toEqual(['no-prorate', 'prorate']);
    const declined = allocationJson(allocation, NEW_YORK, {
      attemptId: 3,
      amountInCents: 700,
      status: 'declined',
      transaction: null,
      message: 'Bogus Gateway: Forced failure',
    });
    expect(declined.payment).toEqual({
      id: null,
      amount_in_cents: 700,
      success: false,
      memo: 'Bogus Gateway: Forced failure',
      status: 'declined',
    });
  });

  it('writes usages with balances only when given', () => {
    const usage = { id: 5, siteId: 1, subscriptionId: 31, componentId: 9, quantity: 4, memo: null, createdAt: AT };
    expect(serializeUsage(usage, NEW_YORK)).toEqual({
      usage: {
        id: 5,
        memo: null,
        created_at: '2026-01-15T07:00:00-05:00',
        quantity: 4,
        component_id: 9,
        subscription_id: 31,
      },
    });
    expect(serializeUsage(usage, NEW_YORK, { previousUnitBalance: 1, newUnitBalance: 5 }).usage).toMatchObject({
      previous_unit_balance: 1,
      new_unit_balance: 5,
    });
  });

  it('writes a subscription component with the pinned pricing, enabled only for on/off', () => {
    const view: SubscriptionComponentView = {
      subscriptionComponent: {
        id: 77,
        siteId: 1,
        subscriptionId: 31,
        componentId: 8,
        componentVersion: 1,
        allocatedQuantity: 0,
        unitBalance: 0,
        createdAt: AT,
        updatedAt: AT,
      },
      component,
      version: {
        siteId: 1,
        componentId: 8,
        version: 1,
        pricing: { scheme: 'per_unit', brackets: [{ startingQuantity: 1, endingQuantity: null, unitPrice: '20' }] },
        createdAt: AT,
      },
    };
    expect(serializeSubscriptionComponent(view, NEW_YORK).component).toMatchObject({
      id: 8,
      component_id: 8,
      enabled: false,
      unit_price: '20.00',
      component_version: 1,
      recurring: true,
      currency: 'USD',
      prices: [{ starting_quantity: 1, ending_quantity: null, unit_price: '20.00' }],
    });
    const metered = serializeSubscriptionComponent(
      { ...view, component: { ...component, kind: 'metered_component' } },
      NEW_YORK,
    ).component;
    expect(metered).not.toHaveProperty('enabled');
    expect(metered.recurring).toBe(false);
  });

  it('writes a preview whose direction is the sign of the total, and none when nothing changes', () => {
    const entry = (charge: number, credit: number) => ({
      input: { componentId: 8, quantity: 1 },
      preview: {
        direction: charge > 0 ? ('upgrade' as const) : credit > 0 ? ('downgrade' as const) : ('none' as const),
        chargeInCents: charge,
        creditInCents: credit,
        discountInCents: 0,
        periodType: 'prorated' as const,
      },
      component,
      previousQuantity: 0,
    });
    const mixed = serializeAllocationPreview(subscriptionView, [entry(300, 0), entry(0, 500)], NEW_YORK);
    expect(mixed.allocation_preview).toMatchObject({
      direction: 'downgrade',
      total_in_cents: -200,
      period_type: 'prorated',
      start_date: '2026-01-15T07:00:00-05:00',
    });
    expect(mixed.allocation_preview.line_items.map((l) => [l.transaction_type, l.amount_in_cents, l.memo])).toEqual([
      ['charge', 300, 'Support: 0 to 1'],
      ['credit', -500, 'Support: 0 to 1'],
    ]);
    const flat = serializeAllocationPreview(subscriptionView, [entry(0, 0)], NEW_YORK).allocation_preview;
    // The SDK's direction enum has only upgrade and downgrade: "none" would fail its validation.
    expect(flat).not.toHaveProperty('direction');
    expect(flat.line_items).toEqual([]);
  });
});

describe('webhook requests and serializers', () => {
  it('reads endpoint bodies, handing blanks on for the engine to report', () => {
    expect(parseWireRequest(endpointRequest, { endpoint: {} })).toEqual({ url: '', webhookSubscriptions: [] });
    expect(
      parseWireRequest(endpointRequest, { endpoint: { url: 'https://x.example/h', webhook_subscriptions: ['test'] } }),
    ).toEqual({ url: 'https://x.example/h', webhookSubscriptions: ['test'] });
    expect(parseWireRequest(endpointUpdateRequest, { endpoint: { webhook_subscriptions: ['a'] } })).toEqual({
      webhookSubscriptions: ['a'],
    });
    expect(rejection(() => parseWireRequest(endpointRequest, { endpoint: { url: [] } })).messages).toEqual([
      'Url: must be a string.',
    ]);
  });

  it('reads replay ids and the list query, refusing what the engine cannot filter', () => {
    expect(replayIdsOf({ ids: [1, '2'] })).toEqual([1, 2]);
    expect(replayIdsOf({})).toEqual([]);
    expect(rejection(() => replayIdsOf({ ids: [0] })).messages).toEqual(['Ids: must be a positive whole number.']);
    expect(
      parseWireParams(webhookListQuery, { status: 'failed', since_date: '2026-01-01', page: '2', per_page: 'x' }),
    ).toEqual({ status: 'failed', sinceDate: '2026-01-01', page: 2 });
    expect(parseWireParams(webhookListQuery, { order: 'newest_first', status: '' })).toEqual({});
    expect(
      rejection(() => parseWireParams(webhookListQuery, { order: 'oldest_first', subscription: '5' })).messages,
    ).toHaveLength(2);
  });

  it('writes endpoints bare and webhooks with their delivery record', () => {
    const endpoint: WebhookEndpointRecord = {
      id: 2,
      siteId: 1,
      url: 'https://x.example/h',
      events: ['signup_success'],
      status: 'paused',
      failureCount: 30,
      createdAt: AT,
      updatedAt: AT,
    };
    expect(endpointJson(endpoint)).toEqual({
      id: 2,
      url: 'https://x.example/h',
      webhook_subscriptions: ['signup_success'],
      status: 'paused',
      site_id: 1,
    });
    const view: WebhookView = {
      id: 9,
      endpointId: 2,
      event: 'signup_success',
      eventId: 4,
      body: 'id=9&event=signup_success',
      signature: 'a'.repeat(32),
      signatureHmacSha256: 'b'.repeat(64),
      status: 'failed',
      successful: false,
      attempts: 5,
      createdAt: AT,
      acceptedAt: null,
      lastSentAt: AT,
      lastSentUrl: 'https://x.example/h',
      lastErrorAt: AT,
      lastError: '404 Not Found (retry 5 of 5)',
    };
    expect(webhookJson(view, NEW_YORK)).toEqual({
      id: 9,
      event: 'signup_success',
      body: 'id=9&event=signup_success',
      signature: 'a'.repeat(32),
      signature_hmac_sha_256: 'b'.repeat(64),
      successful: false,
      status: 'failed',
      endpoint_id: 2,
      created_at: '2026-01-15T07:00:00-05:00',
      accepted_at: null,
      last_sent_at: '2026-01-15T07:00:00-05:00',
      last_sent_url: 'https://x.example/h',
      last_error_at: '2026-01-15T07:00:00-05:00',
      last_error: '404 Not Found (retry 5 of 5)',
    });
  });
});
