/**
 * Well-formed requests for every main-API route of the example app, grouped in route families,
 * keyed by route (`METHOD plain-pattern`, see route-table.ts). The fuzz tests mutate these; the
 * direct-post and hosted-page routes have generators of their own (their inputs are forms and
 * signatures, not wrapped JSON) and are listed here by key only, so that one table says which
 * routes are covered and a route of the app with no entry fails the coverage test.
 */
import type { SiteWorld } from './fuzz-world.js';

/** A well-formed request of one route, before mutation. */
export interface RouteTemplate {
  /** Path parameters (`:name`), as values to put in the path. Default: the world's (see `pathValues`). */
  readonly params?: Readonly<Record<string, string>>;
  /** Query parameters, bracket-encoded when sent. */
  readonly query?: Readonly<Record<string, unknown>>;
  /** The JSON body; absent for routes that read none. */
  readonly body?: unknown;
}

type Builder = (w: SiteWorld) => RouteTemplate;

const CARD = { full_number: '4111111111111111', expiration_month: '12', expiration_year: '2030', cvv: '123' };

function componentBody(w: SiteWorld, wrapper: string): Builder {
  return () => ({
    body: {
      [wrapper]: {
        name: `${w.marker} fuzz component`,
        unit_name: 'unit',
        handle: `${w.marker}-fuzz-component`,
        description: 'd',
        pricing_scheme: 'per_unit',
        unit_price: '1.50',
        taxable: false,
      },
    },
  });
}

const coupon = (w: SiteWorld) => ({
  coupon: {
    name: 'Fuzz coupon',
    code: 'FUZZ10',
    description: 'd',
    percentage: '10',
    recurring: 'true',
    duration_period_count: 2,
    end_date: '2027-01-01T00:00:00Z',
    product_family_id: w.familyId,
    allow_negative_balance: 'false',
    stackable: 'true',
  },
});

const product = (w: SiteWorld) => ({
  product: {
    name: `${w.marker} fuzz product`,
    handle: `${w.marker}-fuzz-product`,
    description: 'd',
    accounting_code: 'acc',
    price_in_cents: 1500,
    interval: 1,
    interval_unit: 'month',
    trial_price_in_cents: 0,
    trial_interval: 7,
    trial_interval_unit: 'day',
    initial_charge_in_cents: 100,
    request_credit_card: true,
    taxable: false,
  },
});

const customer = (w: SiteWorld) => ({
  customer: {
    first_name: 'Fuzz',
    last_name: 'Customer',
    email: `fuzz-${w.marker}@example.com`,
    reference: `${w.marker}-fuzz-ref`,
    organization: 'Org',
    phone: '555',
    address: '1 Main St',
    city: 'Town',
    state: 'NY',
    zip: '10001',
    country: 'US',
  },
});

// Several changes in one request: the route must apply all of them or none (the card, the product
// and the date were separate commands once, and a later one's refusal kept the earlier ones; see
// fuzz-found-bugs.test.ts).
const cardProductAndDate = (w: SiteWorld) => ({
  subscription: {
    credit_card_attributes: { ...CARD, first_name: 'Card', last_name: 'Holder' },
    product_handle: w.otherProductHandle,
    next_billing_at: '2026-02-20T00:00:00Z',
  },
});
const productAndDate = (w: SiteWorld) => ({
  subscription: { product_handle: w.otherProductHandle, next_billing_at: '2026-02-25' },
});

/** A component price point body with a handle unique to `suffix`. */
const componentPricePoint = (w: SiteWorld, suffix: string) => ({
  name: `${w.marker} fuzz cpp ${suffix}`,
  handle: `${w.marker}-fuzz-cpp-${suffix}`,
  pricing_scheme: 'volume',
  prices: [
    { starting_quantity: 1, ending_quantity: 10, unit_price: '4' },
    { starting_quantity: 11, unit_price: '3.5' },
  ],
});

const pricePoint = (w: SiteWorld) => ({
  name: `${w.marker} fuzz price point`,
  handle: `${w.marker}-fuzz-pp`,
  price_in_cents: 2500,
  interval: 3,
  interval_unit: 'month',
  trial_price_in_cents: 0,
  trial_interval: 7,
  trial_interval_unit: 'day',
  initial_charge_in_cents: 100,
  expiration_interval: 12,
  expiration_interval_unit: 'month',
});

/** The main-API route families: route key → well-formed request on a world. */
export const API_FAMILIES: Readonly<Record<string, Readonly<Record<string, Builder>>>> = {
  subscriptions: {
    'POST /subscriptions.json': (w) => ({
      body: {
        subscription: {
          product_handle: w.productHandle,
          customer_attributes: {
            first_name: 'Fuzz',
            last_name: 'Signup',
            email: 'fuzz-signup@example.com',
            reference: `${w.marker}-fuzz-signup`,
          },
          credit_card_attributes: CARD,
          coupon_code: w.couponCode,
          next_billing_at: '2026-03-01',
          components: [{ component_id: w.seatsId, allocated_quantity: 2 }],
          metafields: { [w.subscriptionFieldName]: 'blue' },
          ref: w.referralCode,
        },
      },
    }),
    'GET /subscriptions.json': () => ({
      query: {
        state: 'active',
        page: '1',
        per_page: '20',
        direction: 'asc',
        sort: 'created_at',
        start_date: '2026-01-01',
      },
    }),
    'GET /subscriptions/:id.json': () => ({}),
    'PUT /subscriptions/:id.json': (w) => ({ body: cardProductAndDate(w) }),
    'POST /subscriptions/:id.json': (w) => ({ body: productAndDate(w) }),
    'GET /subscriptions/lookup.json': (w) => ({ query: { reference: w.customerReference } }),
    'POST /subscriptions/preview.json': (w) => ({
      body: {
        subscription: {
          product_handle: w.productHandle,
          customer_attributes: { first_name: 'Fuzz', last_name: 'Preview', email: 'fuzz-preview@example.com' },
          components: [{ component_id: w.seatsId, allocated_quantity: 1 }],
          coupon_code: w.couponCode,
        },
      },
    }),
    // A purge that succeeded would take the world's subscription from every later request: the
    // template's ack names a customer that is not the subscription's, so the well-formed request is
    // refused (422, nothing changed) and its mutations exercise the parsing and the refusals. A
    // purge that succeeds is driven by the SDK test (sdk-subscription-admin.test.ts).
    'POST /subscriptions/:id/purge.json': (w) => ({
      query: { ack: String(w.loneCustomerId), cascade: ['customer', 'payment_profile'] },
    }),
    'PUT /payment_profiles/:id.json': () => ({
      body: { payment_profile: { ...CARD, first_name: 'Card', last_name: 'Holder', billing_zip: '10001' } },
    }),
    'PUT /subscriptions/:id/override.json': () => ({
      body: {
        subscription: {
          activated_at: '2026-01-01T00:00:00Z',
          cancellation_message: 'overridden',
        },
      },
    }),
    // Adds a code beside the subscription's; the deprecated `?code=` form is the mutation's to try.
    'POST /subscriptions/:id/add_coupon.json': (w) => ({ body: { codes: [w.couponSubcode] } }),
  },
  // Payment profiles: `:payment_profile_id` is the customer's second card (not the default).
  paymentProfiles: {
    'POST /payment_profiles.json': (w) => ({
      body: {
        payment_profile: {
          customer_id: w.customerId,
          ...CARD,
          first_name: 'Card',
          last_name: 'Holder',
          billing_address: '1 Main St',
          billing_city: 'Town',
          billing_state: 'NY',
          billing_zip: '10001',
          billing_country: 'US',
        },
      },
    }),
    'GET /payment_profiles.json': (w) => ({ query: { customer_id: String(w.customerId), page: '1', per_page: '20' } }),
    'GET /payment_profiles/:id.json': () => ({}),
    // In this order on the first run: the second card becomes the default, the first (no longer in
    // use) is deleted from the subscription, and deleting the default in use is the service's to refuse.
    'POST /subscriptions/:id/payment_profiles/:payment_profile_id/change_payment_profile.json': () => ({}),
    // Mail needs a mailer: this app has none, so a 422 once the subscription is found.
    'POST /subscriptions/:id/request_payment_profiles_update.json': () => ({}),
    'DELETE /subscriptions/:id/payment_profiles/:payment_profile_id.json': (w) => ({
      params: { payment_profile_id: String(w.paymentProfileId) },
    }),
    'DELETE /payment_profiles/:id.json': (w) => ({ params: { id: String(w.otherPaymentProfileId) } }),
  },
  // Prepayments, service credits, account balances and exports.
  accounts: {
    'GET /subscriptions/:id/account_balances.json': () => ({}),
    'POST /subscriptions/:id/prepayments.json': () => ({
      body: {
        prepayment: { amount: '5.00', memo: 'Prepaid', details: 'Check 12', method: 'check' },
        uniqueness_token: 'fuzz-prepayment',
      },
    }),
    'GET /subscriptions/:id/prepayments.json': () => ({
      query: { page: '1', per_page: '20', filter: { date_field: 'created_at', start_date: '2026-01-01' } },
    }),
    'POST /subscriptions/:id/prepayments/:prepayment_id/refunds.json': () => ({
      body: { refund: { amount: '1.00', memo: 'Back', external: true }, uniqueness_token: 'fuzz-prepayment-refund' },
    }),
    'POST /subscriptions/:id/service_credits.json': () => ({
      body: { service_credit: { amount: '2.00', memo: 'Outage' }, uniqueness_token: 'fuzz-service-credit' },
    }),
    'POST /subscriptions/:id/service_credit_deductions.json': () => ({
      body: { deduction: { amount_in_cents: 50, memo: 'Correction' }, uniqueness_token: 'fuzz-deduction' },
    }),
    'POST /subscriptions/:id/prepaid_configurations.json': () => ({
      body: {
        prepaid_configuration: {
          auto_replenish: true,
          replenish_threshold_amount_in_cents: 1000,
          replenish_to_amount_in_cents: 5000,
        },
      },
    }),
    'POST /api_exports/subscriptions.json': () => ({}),
    'POST /api_exports/invoices.json': () => ({}),
    'GET /api_exports/subscriptions/:batch_id.json': () => ({}),
    'GET /api_exports/invoices/:batch_id.json': () => ({}),
    'GET /api_exports/subscriptions/:batch_id/rows.json': () => ({ query: { page: '1', per_page: '50' } }),
    'GET /api_exports/invoices/:batch_id/rows.json': () => ({ query: { page: '1', per_page: '50' } }),
    'POST /api_exports/proforma_invoices.json': () => ({}),
    'GET /api_exports/proforma_invoices/:batch_id.json': () => ({}),
    'GET /api_exports/proforma_invoices/:batch_id/rows.json': () => ({ query: { page: '1', per_page: '50' } }),
  },
  lifecycle: {
    'DELETE /subscriptions/:id.json': (w) => ({
      body: { subscription: { cancellation_message: 'bye', reason_code: w.reasonCode, cancel_at_end_of_period: '0' } },
    }),
    'POST /subscriptions/:id/delayed_cancel.json': (w) => ({
      body: { subscription: { cancellation_message: 'later', reason_code: w.reasonCode } },
    }),
    'DELETE /subscriptions/:id/delayed_cancel.json': () => ({}),
    'PUT /subscriptions/:id/reactivate.json': () => ({
      query: { include_trial: '0' },
      body: { preserve_balance: '1', resume: { require_resume: 'true' } },
    }),
    'POST /subscriptions/:id/hold.json': () => ({ body: { hold: { automatically_resume_at: '2026-03-01' } } }),
    'POST /subscriptions/:id/resume.json': () => ({}),
    // A new resume date for a subscription on hold (a 422 when it is not on hold).
    'PUT /subscriptions/:id/hold.json': () => ({ body: { hold: { automatically_resume_at: '2026-04-01' } } }),
    // The next dunning retry now (a 422 unless past due).
    'PUT /subscriptions/:id/retry.json': () => ({}),
    // Ends a trial now (a 422 unless trialing); the SDK's body is read and ignored.
    'PUT /subscriptions/:id/activate.json': () => ({ body: { revert_on_failure: true } }),
    // Stops dunning (a 422 unless past due); the SDK posts it, a PUT is taken the same way.
    'POST /subscriptions/:id/cancel_dunning.json': () => ({}),
    'PUT /subscriptions/:id/cancel_dunning.json': () => ({}),
    // Other components than the subscription's are refused; an empty list is the subscription's own.
    'POST /subscriptions/:id/renewals/preview.json': () => ({ body: { components: [] } }),
  },
  migrations: {
    'POST /subscriptions/:id/migrations.json': (w) => ({
      body: {
        migration: {
          product_handle: w.otherProductHandle,
          include_trial: false,
          include_initial_charge: false,
          include_coupons: true,
          preserve_period: true,
          proration: { preserve_period: true },
        },
      },
    }),
    'POST /subscriptions/:id/migrations/preview.json': (w) => ({
      body: { migration: { product_id: w.otherProductId, include_coupons: true, preserve_period: false } },
    }),
  },
  customers: {
    'POST /customers.json': (w) => ({ body: customer(w) }),
    'GET /customers.json': () => ({ query: { page: '1', per_page: '5' } }),
    'GET /customers/:id.json': () => ({}),
    'PUT /customers/:id.json': (w) => ({ body: customer(w) }),
    'DELETE /customers/:id.json': (w) => ({ params: { id: String(w.loneCustomerId) } }),
    'GET /portal/customers/:id/management_link.json': () => ({}),
    // Billing-portal access; invitations need a mailer, which this app has not (a 422).
    'POST /portal/customers/:id/enable.json': () => ({ query: { auto_invite: '1' } }),
    'POST /portal/customers/:id/invitations/invite.json': () => ({}),
    'DELETE /portal/customers/:id/invitations/revoke.json': () => ({}),
    'GET /customers/lookup.json': (w) => ({ query: { reference: w.customerReference } }),
    'GET /customers/:id/subscriptions.json': () => ({ query: { page: '1', per_page: '5', direction: 'desc' } }),
  },
  catalog: {
    'POST /product_families.json': (w) => ({
      body: { product_family: { name: 'Fuzz family', handle: `${w.marker}-fuzz-family`, description: 'd' } },
    }),
    'GET /product_families.json': () => ({}),
    'GET /product_families/:id.json': () => ({}),
    'PUT /product_families/:id.json': () => ({ body: { product_family: { name: 'Renamed', description: 'd2' } } }),
    'POST /product_families/:id/products.json': (w) => ({ body: product(w) }),
    'GET /product_families/:id/products.json': () => ({ query: { include_archived: 'true' } }),
    'GET /products.json': () => ({
      query: { include_archived: 'true', page: '1', per_page: '20', direction: 'desc' },
    }),
    'GET /products/:id.json': () => ({}),
    'GET /products/handle/:handle.json': () => ({}),
    'PUT /products/:id.json': (w) => ({ body: product(w) }),
    'DELETE /products/:id.json': (w) => ({ params: { id: String(w.otherProductId) } }),
  },
  components: {
    'POST /product_families/:id/quantity_based_components.json': (w) => componentBody(w, 'quantity_based_component')(w),
    'POST /product_families/:id/on_off_components.json': (w) => componentBody(w, 'on_off_component')(w),
    'POST /product_families/:id/metered_components.json': (w) => componentBody(w, 'metered_component')(w),
    'GET /product_families/:id/components.json': () => ({ query: { include_archived: 'true' } }),
    'GET /components.json': () => ({
      query: { include_archived: 'true', page: '1', per_page: '20', direction: 'asc' },
    }),
    'GET /components/lookup.json': (w) => ({ query: { handle: w.seatsHandle } }),
    'GET /components/:id.json': () => ({}),
    'PUT /components/:id.json': () => ({
      body: { component: { name: 'Renamed seats', unit_price: '7.00', pricing_scheme: 'per_unit' } },
    }),
    'GET /product_families/:fid/components/:id.json': () => ({}),
    'PUT /product_families/:fid/components/:id.json': () => ({
      body: { component: { name: 'Renamed seats', unit_price: '6.00', pricing_scheme: 'per_unit' } },
    }),
    'DELETE /product_families/:fid/components/:id.json': (w) => ({
      params: { fid: String(w.familyId), id: String(w.supportId) },
    }),
  },
  coupons: {
    'POST /product_families/:id/coupons.json': (w) => ({ body: coupon(w) }),
    'POST /coupons.json': (w) => ({ body: coupon(w) }),
    'GET /coupons.json': () => ({ query: { page: '1', per_page: '10' } }),
    'GET /coupons/find.json': (w) => ({ query: { code: w.couponCode } }),
    'GET /coupons/validate.json': (w) => ({ query: { code: w.couponCode, product_family_id: String(w.familyId) } }),
    'GET /product_families/:id/coupons/validate.json': (w) => ({ query: { code: w.couponCode } }),
    'GET /coupons/:id.json': () => ({}),
    'PUT /coupons/:id.json': (w) => ({ body: coupon(w) }),
    'DELETE /coupons/:id.json': () => ({}),
    // Under the coupon's family: `:id` is the coupon (the default `:id` of a family path is the family).
    'GET /product_families/:id/coupons.json': () => ({ query: { page: '1', per_page: '10' } }),
    'GET /product_families/:fid/coupons/:id.json': (w) => ({ params: { id: String(w.couponId) } }),
    'PUT /product_families/:fid/coupons/:id.json': (w) => ({ params: { id: String(w.couponId) }, body: coupon(w) }),
    'DELETE /product_families/:fid/coupons/:id.json': (w) => ({ params: { id: String(w.couponId) } }),
    'GET /product_families/:fid/coupons/:id/usage.json': (w) => ({ params: { id: String(w.couponId) } }),
    // Subcodes: one new, one the coupon already has (a duplicate), one not a valid code.
    'POST /coupons/:id/codes.json': (w) => ({
      body: { codes: [`${w.marker.toUpperCase()}NEW`, w.couponSubcode, 'bad code!'] },
    }),
    'PUT /coupons/:id/codes.json': (w) => ({ body: { codes: [w.couponSubcode, `${w.marker.toUpperCase()}SUB2`] } }),
    'GET /coupons/:id/codes.json': () => ({ query: { page: '1', per_page: '10' } }),
    'DELETE /coupons/:id/codes/:subcode.json': () => ({}),
    // Currency prices: a site has one currency, so every request is refused (a 422) and writes nothing.
    'PUT /coupons/:id/currency_prices.json': () => ({ body: { currency_prices: [{ currency: 'EUR', price: 5 }] } }),
  },
  // Price points of products (`:id` is the product, `:price_point_id` the world's catalog price point).
  pricePoints: {
    'POST /products/:id/price_points.json': (w) => ({ body: { price_point: pricePoint(w) } }),
    'POST /products/:id/price_points/bulk.json': (w) => ({
      body: {
        price_points: [
          { ...pricePoint(w), handle: `${w.marker}-fuzz-pp-a` },
          {
            ...pricePoint(w),
            name: `${w.marker} fuzz weekly`,
            handle: `${w.marker}-fuzz-pp-b`,
            interval: 7,
            interval_unit: 'day',
          },
        ],
      },
    }),
    'GET /products/:id/price_points.json': () => ({
      query: { archived: 'true', filter: { type: 'catalog,default' }, page: '1', per_page: '20' },
    }),
    'GET /products_price_points.json': () => ({
      query: {
        direction: 'asc',
        // The date filters are refused as not served yet (a 422); the mutations may add them.
        filter: { type: 'catalog' },
        page: '1',
        per_page: '20',
      },
    }),
    'GET /products/:id/price_points/:price_point_id.json': () => ({}),
    'PUT /products/:id/price_points/:price_point_id.json': (w) => ({
      body: { price_point: { name: `${w.marker} renamed pp`, price_in_cents: 9500 } },
    }),
    'DELETE /products/:id/price_points/:price_point_id.json': () => ({}),
    'PATCH /products/:id/price_points/:price_point_id/unarchive.json': () => ({}),
    'PATCH /products/:id/price_points/:price_point_id/default.json': () => ({}),
    // Price points of components (`:id` is the Seats component, `:price_point_id` its default, by handle).
    'POST /components/:id/price_points.json': (w) => ({ body: { price_point: componentPricePoint(w, 'a') } }),
    'POST /components/:id/price_points/bulk.json': (w) => ({
      body: { price_points: [componentPricePoint(w, 'b'), componentPricePoint(w, 'c')] },
    }),
    'GET /components/:id/price_points.json': () => ({
      query: { archived: 'true', filter: { type: 'catalog,default' }, page: '1', per_page: '20' },
    }),
    'GET /components_price_points.json': () => ({
      query: { direction: 'asc', filter: { type: 'catalog', archived_at: 'null' }, page: '1', per_page: '20' },
    }),
    'GET /components/:id/price_points/:price_point_id.json': () => ({ params: { price_point_id: 'handle:original' } }),
    'PUT /components/:id/price_points/:price_point_id.json': (w) => ({
      params: { price_point_id: 'handle:original' },
      body: {
        price_point: {
          name: `${w.marker} renamed cpp`,
          pricing_scheme: 'per_unit',
          prices: [{ starting_quantity: 1, unit_price: '6.5' }],
        },
      },
    }),
    // The default cannot be archived (a 422): the well-formed request the mutations start from.
    'DELETE /components/:id/price_points/:price_point_id.json': () => ({
      params: { price_point_id: 'handle:original' },
    }),
    'PUT /components/:id/price_points/:price_point_id/unarchive.json': () => ({
      params: { price_point_id: 'handle:original' },
    }),
    'PUT /components/:id/price_points/:price_point_id/default.json': () => ({
      params: { price_point_id: 'handle:original' },
    }),
    // A subscription's components moved to a price point (`:id` is the subscription).
    'POST /subscriptions/:id/price_points.json': (w) => ({
      body: { components: [{ component_id: w.seatsId, price_point: 'original' }] },
    }),
    'POST /subscriptions/:id/price_points/reset.json': () => ({}),
    // Currency prices of price points, named by id alone: always refused (a 422 naming the currency
    // or the id; a 404 for an id that is not a price point), nothing written. The component routes
    // get the world's product price point id, which may or may not be a component price point's.
    'POST /product_price_points/:id/currency_prices.json': (w) => ({
      params: { id: String(w.pricePointId) },
      body: { currency_prices: [{ currency: 'EUR', price: 9, role: 'baseline' }] },
    }),
    'PUT /product_price_points/:id/currency_prices.json': (w) => ({
      params: { id: String(w.pricePointId) },
      body: { currency_prices: [{ id: 1, price: 9 }] },
    }),
    'POST /price_points/:id/currency_prices.json': (w) => ({
      params: { id: String(w.pricePointId) },
      body: { currency_prices: [{ currency: 'EUR', price: '1.5', price_id: 1 }] },
    }),
    'PUT /price_points/:id/currency_prices.json': (w) => ({
      params: { id: String(w.pricePointId) },
      body: { currency_prices: [{ id: 1, price: '1.5' }] },
    }),
  },
  reasonCodes: {
    'POST /reason_codes.json': (w) => ({
      body: { reason_code: { code: `${w.marker}-fuzz-rc`, description: 'Too expensive', position: 2 } },
    }),
    'GET /reason_codes.json': () => ({ query: { page: '1', per_page: '10' } }),
    'GET /reason_codes/:id.json': () => ({}),
    'PUT /reason_codes/:id.json': () => ({ body: { reason_code: { description: 'Renamed reason', position: 1 } } }),
    'DELETE /reason_codes/:id.json': () => ({}),
  },
  offers: {
    'POST /offers.json': (w) => ({
      body: {
        offer: {
          name: `${w.marker} fuzz offer`,
          handle: `${w.marker}-fuzz-offer`,
          product_id: w.productId,
          product_price_point_id: w.pricePointId,
          components: [{ component_id: w.seatsId, starting_quantity: 1 }],
          coupons: [w.couponCode],
        },
      },
    }),
    'GET /offers.json': () => ({ query: { page: '1', per_page: '10', include_archived: 'true' } }),
    'GET /offers/:id.json': () => ({}),
    'PUT /offers/:id/archive.json': () => ({}),
    'PUT /offers/:id/unarchive.json': () => ({}),
  },
  metafields: Object.fromEntries(
    (['customers', 'subscriptions'] as const).flatMap((resource) => {
      const field = (w: SiteWorld) => (resource === 'customers' ? w.customerFieldName : w.subscriptionFieldName);
      const entries: [string, Builder][] = [
        [
          `POST /${resource}/metafields.json`,
          () => ({
            body: {
              metafields: [
                { name: 'fuzz_a', input_type: 'text', scope: { hosted: ['all'], csv: '1' } },
                { name: 'fuzz_b', input_type: 'dropdown', enum: ['x', 'y'] },
              ],
            },
          }),
        ],
        [`GET /${resource}/metafields.json`, () => ({ query: { page: '1', per_page: '5' } })],
        [
          `PUT /${resource}/metafields.json`,
          (w) => ({
            body: {
              // Two changes, the second naming a field that does not exist: the whole list must be
              // refused with nothing kept (was a partial write, see fuzz-found-bugs.test.ts).
              metafields: [
                { current_name: field(w), name: `${field(w)}_renamed`, scope: { csv: '1' } },
                { current_name: 'fuzz_missing', name: 'other' },
              ],
            },
          }),
        ],
        [`DELETE /${resource}/metafields.json`, (w) => ({ query: { name: field(w) } })],
        [
          `POST /${resource}/:id/metadata.json`,
          (w) => ({
            body: {
              metadata: [
                { name: field(w), value: 'v1' },
                { name: 'fuzz_missing', value: 'v2' },
              ],
            },
          }),
        ],
        [`PUT /${resource}/:id/metadata.json`, (w) => ({ body: { metadata: { name: field(w), value: 'v3' } } })],
        [`GET /${resource}/:id/metadata.json`, () => ({ query: { page: '1' } })],
        [`DELETE /${resource}/:id/metadata.json`, (w) => ({ query: { names: [field(w), 'fuzz_missing'] } })],
      ];
      return entries;
    }),
  ),
  allocations: {
    'POST /subscriptions/:id/components/:cid/allocations.json': () => ({
      body: {
        allocation: {
          quantity: 4,
          memo: 'more',
          proration_upgrade_scheme: 'prorate-attempt-capture',
          proration_downgrade_scheme: 'no-prorate',
          accrue_charge: false,
          upgrade_charge: 'prorated',
          downgrade_credit: 'none',
          payment_collection_method: 'automatic',
          initiate_dunning: false,
        },
        uniqueness_token: 'fuzz-allocation',
      },
    }),
    'POST /subscriptions/:id/allocations.json': (w) => ({
      body: {
        allocations: [
          { component_id: w.seatsId, quantity: 5, memo: 'bulk' },
          { component_id: w.supportId, quantity: 1 },
        ],
        proration_upgrade_scheme: 'prorate-attempt-capture',
        accrue_charge: false,
        uniqueness_token: 'fuzz-bulk',
      },
    }),
    'POST /subscriptions/:id/allocations/preview.json': (w) => ({
      body: {
        allocations: [{ component_id: w.seatsId, quantity: 7 }],
      },
    }),
    'GET /subscriptions/:id/components/:cid/allocations.json': () => ({ query: { page: '1' } }),
    'POST /subscriptions/:id/components/:cid/usages.json': (w) => ({
      params: { cid: String(w.callsId) },
      body: { usage: { quantity: 10, memo: 'calls' }, uniqueness_token: 'fuzz-usage' },
    }),
    'GET /subscriptions/:id/components/:cid/usages.json': (w) => ({
      params: { cid: String(w.callsId) },
      query: { since_id: '1', max_id: '100000', page: '1', per_page: '20' },
    }),
    'GET /subscriptions/:id/components.json': () => ({}),
    'GET /subscriptions/:id/components/:cid.json': () => ({}),
  },
  ledger: {
    'POST /subscriptions/:id/charges.json': () => ({
      body: { charge: { amount: '1.50', memo: 'Setup', delay_capture: false }, uniqueness_token: 'fuzz-charge' },
    }),
    'POST /subscriptions/:id/adjustments.json': () => ({
      body: {
        adjustment: { amount: '-0.50', memo: 'Adjust', adjustment_method: 'default' },
        uniqueness_token: 'fuzz-adjustment',
      },
    }),
    'POST /subscriptions/:id/credits.json': () => ({
      body: { credit: { amount_in_cents: 75, memo: 'Credit' }, uniqueness_token: 'fuzz-credit' },
    }),
    'POST /subscriptions/:id/payments.json': () => ({
      body: { payment: { amount: '0.25', memo: 'Check' }, uniqueness_token: 'fuzz-payment' },
    }),
    'POST /subscriptions/:id/refunds.json': (w) => ({
      body: {
        refund: { payment_id: w.signupPaymentId, amount: '0.10', memo: 'Refund' },
        external: 1,
        uniqueness_token: 'fuzz-refund',
      },
    }),
    'GET /transactions.json': () => ({
      query: { kinds: ['charge', 'payment'], since_id: '1', max_id: '1000', page: '1', direction: 'desc' },
    }),
    'GET /subscriptions/:id/transactions.json': () => ({ query: { kinds: ['charge'], since_date: '2026-01-01' } }),
  },
  notes: {
    'POST /subscriptions/:id/notes.json': () => ({
      body: { note: { body: 'A note', sticky: true }, uniqueness_token: 'fuzz-note' },
    }),
    'GET /subscriptions/:id/notes.json': () => ({ query: { page: '1', per_page: '5' } }),
    'GET /subscriptions/:id/notes/:note_id.json': () => ({}),
    'PUT /subscriptions/:id/notes/:note_id.json': () => ({ body: { note: { body: 'Edited', sticky: false } } }),
    'DELETE /subscriptions/:id/notes/:note_id.json': () => ({}),
    'GET /referral_codes/validate.json': (w) => ({ query: { code: w.referralCode } }),
  },
  webhooks: {
    'POST /endpoints.json': (w) => ({
      body: {
        endpoint: { url: `https://fuzz-${w.marker}.example.com/hook`, webhook_subscriptions: ['signup_success'] },
      },
    }),
    'GET /endpoints.json': () => ({}),
    'GET /endpoints/:id.json': () => ({}),
    'PUT /endpoints/:id.json': (w) => ({
      body: { endpoint: { url: `${w.endpointUrl}?v=2`, webhook_subscriptions: ['payment_success'] } },
    }),
    'DELETE /endpoints/:id.json': () => ({}),
    'POST /endpoints/:id/test.json': () => ({}),
    'GET /webhooks.json': () => ({
      query: {
        status: 'pending',
        since_date: '2026-01-01',
        until_date: '2026-12-31',
        page: '1',
        order: 'newest_first',
      },
    }),
    'POST /webhooks/replay.json': (w) => ({ body: { ids: [w.webhookId] } }),
    'PUT /webhooks/settings.json': () => ({ body: { webhooks_enabled: true } }),
  },
  site: {
    'GET /calls/:id.json': () => ({}),
    // The body is not read; the scope is: an unknown one is a 422, and a known one clears the site.
    'POST /sites/clear_data.json': () => ({ query: { cleanup_scope: 'customers' } }),
    'GET /site.json': () => ({}),
  },
  // Invoices, credit notes and statements (the JSON routes; the PDF and HTML documents are in DOCUMENT_ROUTES).
  invoices: {
    'GET /invoices.json': (w) => ({
      query: {
        status: 'paid',
        subscription_id: String(w.subscriptionId),
        customer_ids: String(w.customerId),
        start_date: '2026-01-01',
        end_date: '2026-12-31',
        date_field: 'issue_date',
        page: '1',
        per_page: '20',
        direction: 'desc',
      },
    }),
    'GET /invoices/events.json': (w) => ({ query: { invoice_uid: w.invoiceUid, page: '1', per_page: '50' } }),
    'GET /invoices/:uid.json': () => ({}),
    'GET /invoices/:uid/events.json': () => ({ query: { page: '1', per_page: '10' } }),
    'POST /invoices/:uid/payments.json': (w) => ({
      params: { uid: w.openInvoiceUid },
      body: { payment: { amount: '0.50', memo: 'Check 42', method: 'check' }, type: 'external' },
    }),
    'POST /invoices/:uid/refunds.json': () => ({ body: { refund: { amount: '0.10', memo: 'Goodwill' } } }),
    'POST /invoices/:uid/void.json': (w) => ({
      params: { uid: w.openInvoiceUid },
      body: { void: { reason: 'Duplicate' } },
    }),
    'POST /invoices/:uid/reopen.json': (w) => ({ params: { uid: w.openInvoiceUid } }),
    // One external payment over two invoices (the second is paid already: the service's answer decides).
    'POST /invoices/payments.json': (w) => ({
      body: {
        payment: {
          amount: '0.60',
          memo: 'Wire 9',
          method: 'check',
          details: 'ref 9',
          applications: [
            { invoice_uid: w.openInvoiceUid, amount: '0.50' },
            { invoice_uid: w.invoiceUid, amount: '0.10' },
          ],
        },
      },
    }),
    'POST /invoices/:uid/customer_information/preview.json': (w) => ({ params: { uid: w.openInvoiceUid } }),
    'PUT /invoices/:uid/customer_information.json': (w) => ({ params: { uid: w.openInvoiceUid } }),
    // Nothing is ever a draft here, so a 422; the body is read all the same.
    'POST /invoices/:uid/issue.json': () => ({ body: { on_failed_payment: 'leave_open_invoice' } }),
    'GET /credit_notes.json': (w) => ({
      query: { subscription_id: String(w.subscriptionId), page: '1', per_page: '5', direction: 'asc' },
    }),
    'GET /credit_notes/:uid.json': () => ({}),
    'POST /subscriptions/:id/invoices.json': () => ({
      body: {
        invoice: {
          line_items: [{ title: 'Setup', description: 'd', quantity: '2', unit_price: '5.00' }],
          memo: 'Ad hoc',
          net_terms: 15,
        },
      },
    }),
    'GET /subscriptions/:id/statements.json': () => ({ query: { page: '1', per_page: '5' } }),
    'GET /statements/:id.json': () => ({}),
    // Sending an invoice needs a mailer (a 422 here); its consolidation segments are always an empty page.
    'POST /invoices/:uid/deliveries.json': () => ({
      body: { recipient_emails: ['fuzz@example.com'], cc_recipient_emails: [], bcc_recipient_emails: [] },
    }),
    'GET /invoices/:uid/segments.json': () => ({ query: { page: '1', per_page: '5', direction: 'asc' } }),
    // Proforma invoices: kept or previewed, never billed. The world has none at first, so reads
    // and voids by uid name one the runs' creates may not have made (a 404 is an answer too).
    'POST /subscriptions/:id/proforma_invoices.json': () => ({}),
    'POST /subscriptions/:id/proforma_invoices/preview.json': () => ({}),
    'GET /subscriptions/:id/proforma_invoices.json': () => ({
      query: { status: 'draft', direction: 'asc', line_items: 'true', start_date: '2026-01-01', per_page: '5' },
    }),
    'GET /proforma_invoices/:uid.json': () => ({ params: { uid: 'pro_0000000000000a' } }),
    'POST /proforma_invoices/:uid/void.json': () => ({
      params: { uid: 'pro_0000000000000a' },
      body: { void: { reason: 'Superseded' } },
    }),
    // Advance invoices: the next period issued early (force replaces one), read, and voided.
    'POST /subscriptions/:id/advance_invoice/issue.json': () => ({ body: { force: true } }),
    'GET /subscriptions/:id/advance_invoice.json': () => ({}),
    'POST /subscriptions/:id/advance_invoice/void.json': () => ({ body: { void: { reason: 'Superseded' } } }),
    'POST /subscriptions/proforma_invoices.json': (w) => ({
      body: {
        subscription: {
          product_handle: w.productHandle,
          customer_attributes: { first_name: 'Fuzz', last_name: 'Proforma', email: 'fuzz-proforma@example.com' },
          components: [{ component_id: w.seatsId, allocated_quantity: 1 }],
          coupon_code: w.couponCode,
        },
      },
    }),
    'POST /subscriptions/proforma_invoices/preview.json': (w) => ({
      query: { include: 'next_proforma_invoice' },
      body: {
        subscription: {
          product_handle: w.productHandle,
          customer_id: w.customerId,
        },
      },
    }),
  },
  // Events polling: the site's events, a count, one subscription's.
  events: {
    'GET /events.json': () => ({
      query: {
        since_id: '1',
        max_id: '100000',
        direction: 'asc',
        filter: 'signup_success,payment_success',
        date_field: 'created_at',
        start_date: '2026-01-01',
        end_date: '2026-12-31',
        page: '1',
        per_page: '20',
      },
    }),
    'GET /events/count.json': () => ({ query: { filter: ['signup_success', 'payment_success'], since_id: '1' } }),
    'GET /subscriptions/:id/events.json': () => ({ query: { direction: 'desc', per_page: '5' } }),
  },
  // Alone, on a world whose subscriptions have no coupon, so every answer is a refusal: a removal
  // that succeeds answers the service's plain-text sentence, which the runner's judge (JSON on
  // every success) does not take. The success is checked in subscription-coupon-routes.test.ts.
  couponRemoval: {
    'DELETE /subscriptions/:id/remove_coupon.json': (w) => ({ query: { coupon_code: w.couponCode } }),
  },
  // Site statistics, MRR and the site-wide metadata and subscription-component lists (read only).
  // Last, so that the families before it keep their positions (fuzz-postgres-hostile seeds by position).
  // No paging values: paging is read leniently (a bad page is the first), so a mutated one is not refused.
  reports: {
    'GET /stats.json': () => ({}),
    'GET /mrr.json': (w) => ({ query: { subscription_id: String(w.subscriptionId) } }),
    'GET /subscriptions_mrr.json': (w) => ({
      query: { filter: { subscription_ids: String(w.subscriptionId) }, direction: 'asc' },
    }),
    ...Object.fromEntries(
      (['customers', 'subscriptions'] as const).map((resource): [string, Builder] => [
        `GET /${resource}/metadata.json`,
        (w) => ({
          query: {
            resource_ids: [String(resource === 'customers' ? w.customerId : w.subscriptionId)],
            date_field: 'updated_at',
            start_date: '2026-01-01',
            with_deleted: 'false',
            direction: 'desc',
          },
        }),
      ]),
    ),
    'GET /subscriptions_components.json': (w) => ({
      query: {
        subscription_ids: String(w.subscriptionId),
        product_family_ids: String(w.familyId),
        sort: 'updated_at',
        direction: 'asc',
        date_field: 'updated_at',
        start_date: '2026-01-01',
        filter: { subscription: { states: 'active,past_due' } },
      },
    }),
    'GET /mrr_movements.json': (w) => ({ query: { subscription_id: String(w.subscriptionId), direction: 'asc' } }),
  },
};

/** The direct-post routes (forms and signatures; see fuzz-direct-hosted.test.ts). */
export const DIRECT_ROUTES: readonly string[] = [
  'POST /api/v2/signups',
  'POST /api/v2/signups.json',
  'POST /api/v2/subscriptions/:id/card_update',
  'GET /api/v2/calls/:id',
];

/** The hosted pages (HTML; tokens and signed links; see fuzz-direct-hosted.test.ts). */
export const HOSTED_ROUTES: readonly string[] = [
  'GET /update_payment/:id/:token',
  'POST /update_payment/:id/:token',
  'GET /portal/:customerId/:expires/:signature',
  'POST /portal/:customerId/:expires/:signature/:action',
  'ALL /update_payment/*',
  'GET /portal/:customerId/:expires/:signature/invoices/:file',
  'ALL /portal/*',
];

/**
 * The invoice and credit note documents (a PDF, or an invoice's HTML page): main-API routes, but
 * not JSON on success, so they have a generator of their own (see fuzz-db-direct-hosted.test.ts).
 */
export const DOCUMENT_ROUTES: readonly string[] = ['GET /invoices/:uid', 'GET /credit_notes/:uid'];

/**
 * The public routes that need no site or key: the how-to at the root and the API reference (the
 * OpenAPI document, its page and the page's script), fuzzed beside the hosted pages, and the
 * operations routes (health, readiness, metrics; see test/http/ops-*.test.ts).
 */
export const PUBLIC_ROUTES: readonly string[] = [
  'GET /',
  'GET /openapi.json',
  'GET /docs',
  'GET /docs/api-reference.js',
  'GET /healthz',
  'GET /readyz',
  'GET /metrics',
];

/** Every route key the fuzz tests cover. */
export function fuzzedRouteKeys(): string[] {
  return [
    ...Object.values(API_FAMILIES).flatMap((family) => Object.keys(family)),
    ...DOCUMENT_ROUTES,
    ...DIRECT_ROUTES,
    ...HOSTED_ROUTES,
    ...PUBLIC_ROUTES,
  ];
}
