/**
 * Isolation matrix (issue 11, part 6). For EVERY route of the example app, read from Hono's route
 * table so that a route added later fails here until it has a case:
 *
 * - site A's API key on site A's host, naming site B's records (path ids, handles, codes, names in
 *   the query or body): 404 (or a 422 where only the body names B's record), and the answer shows
 *   nothing of B's;
 * - a site's key on the other site's host: 401 on every main-API route;
 * - the direct-post routes with A's direct credentials and B's ids, and the hosted pages on A's host
 *   with B's ids, tokens and links: the same refusals in those interfaces' own terms;
 * - after each request, a dump of the whole SQLite database (read through a connection of the
 *   test's own): unchanged after any refusal (except a refused direct post's own call record and
 *   nonce claim, by design), and B's rows unchanged after anything.
 *
 * Site A is `acme`, site B is `globex`; every free text of B carries the marker `glxsecret`, and
 * B's keys, secrets, referral code and call id are searched for too. A string the request itself
 * sent may be echoed back (an id or a handle in a "not found"); nothing else of B's may appear.
 */
import { createPortalLink } from 'billing-engine';
import { buildSecureFields, hostedPageToken } from 'billing-engine/chargify';
import { describe, expect, it } from 'vitest';
import { basic, type HttpReply, type RawRequest } from './support/client.js';
import {
  type DatabaseDump,
  type DumpAllowance,
  describeChanges,
  diffDumps,
  openDatabaseDumper,
  siteSlice,
  unexpectedChanges,
} from './support/db-dump.js';
import { API_FAMILIES, PUBLIC_ROUTES, type RouteTemplate } from './support/fuzz-cases.js';
import { apiRequest, describeRequest, noNetworkFetch } from './support/fuzz-runner.js';
import { markerOf, pathValues, type SiteWorld, seedSiteWorld } from './support/fuzz-world.js';
import { type HttpFixture, useHttpFixture } from './support/http-fixture.js';
import { appRoutes, pathOfKey, patternParams } from './support/route-table.js';

/** One request of the matrix and what it may answer. */
interface IsolationCase {
  readonly name: string;
  readonly request: RawRequest;
  /** Statuses it may answer. */
  readonly expect: readonly number[];
  /** For a 303 (direct post, portal action): the result must be a refusal all the same. */
  readonly refusedRedirect?: (reply: HttpReply) => boolean;
  /** Changes a refusal may make (a refused direct post's call record on A). */
  readonly allowances?: readonly DumpAllowance[];
  /**
   * When it runs: `late` for a create that gives A a record with one of B's names (names are per
   * site), after every case that names B's records, so those still find nothing of A's by that
   * name; `last` for clearing A's data.
   */
  readonly order?: 'late' | 'last';
  /**
   * What the answer must show beyond "nothing of B's" (a list holds A's records only, a count
   * counts A's only), checked against the dump taken before the request: the problems found.
   */
  readonly check?: (reply: HttpReply, before: DatabaseDump) => string[];
}

type CaseBuilder = (f: HttpFixture, a: SiteWorld, b: SiteWorld) => IsolationCase[];

const CARD = { full_number: '4111111111111111', expiration_month: '12', expiration_year: '2030' };

/**
 * Records of a site beyond its fuzz world that the newer routes name in their paths (a price point,
 * a reason code, a coupon subcode, a prepayment, an export of each kind), seeded through the
 * engine's site handle; every text carries the site's marker.
 */
interface WorldExtras {
  readonly pricePointId: number;
  readonly componentPricePointId: number;
  readonly reasonCodeId: number;
  readonly reasonCode: string;
  readonly subcode: string;
  readonly prepaymentId: number;
  readonly subscriptionExportId: number;
  readonly invoiceExportId: number;
  readonly proformaUid: string;
  readonly proformaExportId: number;
}

const EXTRAS = new Map<SiteWorld, WorldExtras>();

function extrasOf(w: SiteWorld): WorldExtras {
  const found = EXTRAS.get(w);
  if (found === undefined) throw new Error(`no extras seeded for ${w.site}`);
  return found;
}

/** Seeds `w`'s extra records (see {@link WorldExtras}). */
async function seedExtras(f: HttpFixture, w: SiteWorld): Promise<void> {
  const h = f.engine.site(w.site);
  const m = w.marker;
  const pricePoint = await h.pricePoints.createProductPricePoint(w.productId, {
    name: `${m} tier`,
    handle: `${m}-tier`,
    priceInCents: 700,
    interval: 1,
    intervalUnit: 'month',
  });
  const componentPricePoint = await h.pricePoints.createComponentPricePoint(w.seatsId, {
    name: `${m} seat tier`,
    handle: `${m}-seat-tier`,
    unitPrice: '3',
  });
  const reasonCode = `${m.toUpperCase()}_WHY`;
  const reason = await h.reasonCodes.create({ code: reasonCode, description: `${m} reason` });
  const subcode = `${m.toUpperCase()}SUB1`;
  await h.coupons.createSubcodes(w.couponId, [subcode]);
  const prepayment = await h.accounts.createPrepayment(w.subscriptionId, {
    amount: '5.00',
    memo: `${m} prepayment`,
    details: `${m} check 1`,
    method: 'check',
  });
  const subscriptionExport = await h.exports.exportSubscriptions();
  const invoiceExport = await h.exports.exportInvoices();
  const proforma = await h.proformaInvoices.create(w.subscriptionId);
  const proformaExport = await h.exports.exportProformaInvoices();
  EXTRAS.set(w, {
    pricePointId: pricePoint.pricePoint.id,
    componentPricePointId: componentPricePoint.pricePoint.id,
    reasonCodeId: reason.id,
    reasonCode,
    subcode,
    prepaymentId: prepayment.entry.id,
    subscriptionExportId: subscriptionExport.id,
    invoiceExportId: invoiceExport.id,
    proformaUid: proforma.uid,
    proformaExportId: proformaExport.id,
  });
}

/** The path values of the extra records for route `key` (the fuzz world's own values win). */
function extraParams(key: string, w: SiteWorld): Record<string, string> {
  const x = extrasOf(w);
  const first = pathOfKey(key).split('/')[1] ?? '';
  return {
    subcode: x.subcode,
    price_point_id: String(first === 'components' ? x.componentPricePointId : x.pricePointId),
    prepayment_id: String(x.prepaymentId),
    payment_profile_id: String(w.paymentProfileId),
    batch_id: String(
      key.includes('/api_exports/invoices/')
        ? x.invoiceExportId
        : key.includes('/api_exports/proforma_invoices/')
          ? x.proformaExportId
          : x.subscriptionExportId,
    ),
    ...(first === 'proforma_invoices' ? { uid: x.proformaUid } : {}),
    ...(first === 'reason_codes' ? { id: String(x.reasonCodeId) } : {}),
  };
}

/** Seeds both sites' worlds and extras. */
async function seedBoth(f: HttpFixture): Promise<[SiteWorld, SiteWorld]> {
  const a = await seedSiteWorld(f, 'acme');
  const b = await seedSiteWorld(f, 'globex');
  await seedExtras(f, a);
  await seedExtras(f, b);
  return [a, b];
}

/** The fuzz template of a main-API route (built on `w`), or none. */
function template(key: string, w: SiteWorld): RouteTemplate {
  for (const family of Object.values(API_FAMILIES)) {
    const build = family[key];
    if (build !== undefined) return build(w);
  }
  return {};
}

/** A main-API request as A (key and host), with the given path values, query and body. */
function asA(f: HttpFixture, a: SiteWorld, key: string, t: RouteTemplate): RawRequest {
  return apiRequest(f, a, key, t, { kind: 'valid' });
}

/**
 * The default case of a main-API route whose path names records: every path value and the body
 * taken from B's world (so every id, handle and name in it is B's), sent with A's key to A's host.
 */
function namingB(key: string): CaseBuilder {
  return (f, a, b) => {
    const plain = pathOfKey(key);
    const t = template(key, b);
    const params = pathValues(b, plain, { ...extraParams(key, b), ...t.params });
    return [
      {
        name: `${key} with B's ids`,
        request: asA(f, a, key, { ...t, params }),
        expect: [404],
      },
    ];
  };
}

/**
 * As {@link namingB}, with a well-formed body or query of the caller's (so that the refusal is the
 * lookup's, not the body's); path values B's, extra records' included.
 */
function namingBWith(key: string, build: (b: SiteWorld) => RouteTemplate): CaseBuilder {
  return (f, a, b) => {
    const t = build(b);
    const params = pathValues(b, pathOfKey(key), { ...extraParams(key, b), ...t.params });
    return [{ name: `${key} with B's ids and a valid body`, request: asA(f, a, key, { ...t, params }), expect: [404] }];
  };
}

/** A case as A on a route naming A's own records, with A's extra records' path values (overrides win). */
function ownWith(
  name: string,
  key: string,
  expect: readonly number[],
  build: (b: SiteWorld, a: SiteWorld) => RouteTemplate,
): CaseBuilder {
  return (f, a, b) => {
    const t = build(b, a);
    return [
      {
        name: `${key}: ${name}`,
        request: asA(f, a, key, { ...t, params: { ...extraParams(key, a), ...t.params } }),
        expect,
      },
    ];
  };
}

/** A case on a main-API route as A: explicit path values (defaults A's), query and body. */
function custom(
  name: string,
  key: string,
  expect: readonly number[],
  build: (b: SiteWorld, a: SiteWorld) => RouteTemplate,
  order?: 'late' | 'last',
): CaseBuilder {
  return (f, a, b) => [
    {
      name: `${key}: ${name}`,
      request: asA(f, a, key, build(b, a)),
      expect,
      ...(order === undefined ? {} : { order }),
    },
  ];
}

/** The values of one column of a site's rows of `table` in the dump, as text. */
function columnOf(dump: DatabaseDump, table: string, siteId: number, column: string): string[] {
  const t = siteSlice(dump, siteId).tables[table];
  if (t === undefined) throw new Error(`no table ${table} in the dump`);
  const at = t.columns.indexOf(column);
  if (at === -1) throw new Error(`no column ${column} in ${table}`);
  return t.rows.map((row) => String(row[at]));
}

/**
 * A list answer's items (`pick` reads each item's id) must all be A's (`table.column` of site A in
 * the dump), and there must be `min` of them at least, so that an empty answer does not pass for
 * an isolated one where A has records.
 */
function onlyA(
  a: SiteWorld,
  table: string,
  column: string,
  items: (body: unknown) => unknown[],
  pick: (item: unknown) => unknown,
  min = 1,
): (reply: HttpReply, before: DatabaseDump) => string[] {
  return (reply, before) => {
    if (reply.status !== 200) return [];
    const own = new Set(columnOf(before, table, a.siteId, column));
    const listed = items(reply.json()).map((item) => String(pick(item)));
    const problems = listed.filter((id) => !own.has(id)).map((id) => `listed ${id}, not A's ${table}`);
    if (listed.length < min) problems.push(`listed ${listed.length} of A's ${table}, expected ${min} at least`);
    return problems;
  };
}

/** A list answer filtered by one of B's records: empty. */
function emptyList(items: (body: unknown) => unknown[]): (reply: HttpReply) => string[] {
  return (reply) => {
    if (reply.status !== 200) return [];
    const found = items(reply.json());
    return found.length === 0 ? [] : [`listed ${found.length} records for B's filter`];
  };
}

const field = (name: string) => (body: unknown) => (body as Record<string, unknown[]>)[name] ?? [];
const bare = (body: unknown) => body as unknown[];
const inner = (wrapper: string, key: string) => (item: unknown) =>
  (item as Record<string, Record<string, unknown>>)[wrapper]?.[key];

/** A case on a main-API route as A whose 200 answer `check` looks into. */
function checked(
  name: string,
  key: string,
  expect: readonly number[],
  build: (b: SiteWorld, a: SiteWorld) => RouteTemplate,
  check: (a: SiteWorld, b: SiteWorld) => (reply: HttpReply, before: DatabaseDump) => string[],
): CaseBuilder {
  return (f, a, b) => [{ name: `${key}: ${name}`, request: asA(f, a, key, build(b, a)), expect, check: check(a, b) }];
}

function all(...builders: CaseBuilder[]): CaseBuilder {
  return (f, a, b) => builders.flatMap((builder) => builder(f, a, b));
}

const REFUSED = [404, 422] as const;

/**
 * Main-API routes that name no record in their path: each names B's records in its query or body
 * where it can (refused), or is a list or a create that must show and touch only A's data.
 */
const SITE_WIDE: Readonly<Record<string, CaseBuilder>> = {
  'POST /subscriptions.json': all(
    custom("B's product handle", 'POST /subscriptions.json', REFUSED, (b) => ({
      body: {
        subscription: {
          product_handle: b.productHandle,
          customer_attributes: { first_name: 'X', last_name: 'Y', email: 'x@example.com' },
          credit_card_attributes: CARD,
        },
      },
    })),
    custom("B's product id", 'POST /subscriptions.json', REFUSED, (b, a) => ({
      body: { subscription: { product_id: b.productId, customer_id: a.customerId, credit_card_attributes: CARD } },
    })),
    custom("B's offer id", 'POST /subscriptions.json', REFUSED, (b, a) => ({
      body: { subscription: { offer_id: b.offerId, customer_id: a.customerId, credit_card_attributes: CARD } },
    })),
    custom("B's offer handle", 'POST /subscriptions.json', REFUSED, (b, a) => ({
      body: {
        subscription: { offer_id: `handle:${b.offerHandle}`, customer_id: a.customerId, credit_card_attributes: CARD },
      },
    })),
    custom("B's customer id", 'POST /subscriptions.json', REFUSED, (b, a) => ({
      body: {
        subscription: { product_handle: a.productHandle, customer_id: b.customerId, credit_card_attributes: CARD },
      },
    })),
    custom("B's customer reference", 'POST /subscriptions.json', REFUSED, (b, a) => ({
      body: {
        subscription: {
          product_handle: a.productHandle,
          customer_reference: b.customerReference,
          credit_card_attributes: CARD,
        },
      },
    })),
    custom("B's coupon code", 'POST /subscriptions.json', REFUSED, (b, a) => ({
      body: {
        subscription: {
          product_handle: a.productHandle,
          customer_id: a.customerId,
          coupon_code: b.couponCode,
          credit_card_attributes: CARD,
        },
      },
    })),
    custom("B's component", 'POST /subscriptions.json', REFUSED, (b, a) => ({
      body: {
        subscription: {
          product_handle: a.productHandle,
          customer_id: a.customerId,
          components: [{ component_id: b.seatsId, allocated_quantity: 1 }],
          credit_card_attributes: CARD,
        },
      },
    })),
    custom("B's payment profile", 'POST /subscriptions.json', REFUSED, (b, a) => ({
      body: {
        subscription: {
          product_handle: a.productHandle,
          customer_id: a.customerId,
          payment_profile_id: b.paymentProfileId,
        },
      },
    })),
    custom("B's referral code", 'POST /subscriptions.json', REFUSED, (b, a) => ({
      body: {
        subscription: {
          product_handle: a.productHandle,
          customer_id: a.customerId,
          ref: b.referralCode,
          credit_card_attributes: CARD,
        },
      },
    })),
  ),
  'GET /subscriptions.json': custom('list', 'GET /subscriptions.json', [200], () => ({})),
  'POST /customers.json': custom(
    "B's email and reference (per site)",
    'POST /customers.json',
    [201],
    (b) => ({
      body: {
        customer: { first_name: 'A', last_name: 'Copy', email: b.customerEmail, reference: b.customerReference },
      },
    }),
    'late',
  ),
  'GET /customers.json': custom('list', 'GET /customers.json', [200], () => ({})),
  'POST /product_families.json': custom(
    "B's family handle (per site)",
    'POST /product_families.json',
    [201],
    (b) => ({ body: { product_family: { name: 'A copy', handle: b.familyHandle } } }),
    'late',
  ),
  'GET /product_families.json': custom('list', 'GET /product_families.json', [200], () => ({})),
  'POST /coupons.json': custom("B's family", 'POST /coupons.json', REFUSED, (b) => ({
    body: { coupon: { name: 'X', code: 'ACOPY', percentage: '5', product_family_id: b.familyId } },
  })),
  'GET /coupons.json': custom('list', 'GET /coupons.json', [200], () => ({})),
  'GET /coupons/find.json': custom("B's code", 'GET /coupons/find.json', [404], (b) => ({
    query: { code: b.couponCode },
  })),
  'GET /coupons/validate.json': all(
    custom("B's code", 'GET /coupons/validate.json', [404], (b) => ({ query: { code: b.couponCode } })),
    custom("A's code in B's family", 'GET /coupons/validate.json', REFUSED, (b, a) => ({
      query: { code: a.couponCode, product_family_id: String(b.familyId) },
    })),
  ),
  'GET /transactions.json': custom('list', 'GET /transactions.json', [200], () => ({})),
  'GET /referral_codes/validate.json': custom("B's referral code", 'GET /referral_codes/validate.json', [404], (b) => ({
    query: { code: b.referralCode },
  })),
  'POST /endpoints.json': custom(
    "B's endpoint URL (per site)",
    'POST /endpoints.json',
    [201],
    (b) => ({ body: { endpoint: { url: b.endpointUrl, webhook_subscriptions: ['signup_success'] } } }),
    'late',
  ),
  'GET /endpoints.json': custom('list', 'GET /endpoints.json', [200], () => ({})),
  'GET /webhooks.json': custom('list', 'GET /webhooks.json', [200], () => ({})),
  'POST /webhooks/replay.json': custom("B's webhook", 'POST /webhooks/replay.json', [404], (b) => ({
    body: { ids: [b.webhookId] },
  })),
  'GET /subscriptions/lookup.json': custom("B's customer reference", 'GET /subscriptions/lookup.json', [404], (b) => ({
    query: { reference: b.customerReference },
  })),
  'POST /subscriptions/preview.json': custom(
    "B's product and component",
    'POST /subscriptions/preview.json',
    REFUSED,
    (b) => ({
      body: {
        subscription: {
          product_handle: b.productHandle,
          customer_attributes: { first_name: 'X', last_name: 'Y', email: 'x@example.com' },
          components: [{ component_id: b.seatsId, allocated_quantity: 1 }],
        },
      },
    }),
  ),
  // A signup's proforma invoice runs the signup: B's product and component are not A's.
  ...Object.fromEntries(
    ['POST /subscriptions/proforma_invoices.json', 'POST /subscriptions/proforma_invoices/preview.json'].map(
      (key): [string, CaseBuilder] => [
        key,
        custom("B's product and component", key, REFUSED, (b) => ({
          body: {
            subscription: {
              product_handle: b.productHandle,
              customer_attributes: { first_name: 'X', last_name: 'Y', email: 'x@example.com' },
              components: [{ component_id: b.seatsId, allocated_quantity: 1 }],
            },
          },
        })),
      ],
    ),
  ),
  'GET /customers/lookup.json': custom("B's reference", 'GET /customers/lookup.json', [404], (b) => ({
    query: { reference: b.customerReference },
  })),
  'GET /products.json': checked(
    'list (archived too)',
    'GET /products.json',
    [200],
    () => ({ query: { include_archived: 'true', per_page: '200' } }),
    (a) => onlyA(a, 'products', 'id', bare, inner('product', 'id'), 2),
  ),
  'GET /components.json': checked(
    'list (archived too)',
    'GET /components.json',
    [200],
    () => ({ query: { include_archived: 'true', per_page: '200' } }),
    (a) => onlyA(a, 'components', 'id', bare, inner('component', 'id'), 3),
  ),
  'GET /components/lookup.json': custom("B's component handle", 'GET /components/lookup.json', [404], (b) => ({
    query: { handle: b.seatsHandle },
  })),
  'GET /events.json': all(
    checked(
      'list',
      'GET /events.json',
      [200],
      () => ({ query: { per_page: '200', direction: 'asc' } }),
      (a) => onlyA(a, 'outbox_events', 'id', bare, inner('event', 'id')),
    ),
    // Ids are global: B's event ids, as a range, find none of B's events.
    checked(
      "B's event ids as the range",
      'GET /events.json',
      [200],
      () => ({ query: { since_id: '1', max_id: '1000000', per_page: '200' } }),
      (a) => onlyA(a, 'outbox_events', 'id', bare, inner('event', 'id')),
    ),
  ),
  'GET /events/count.json': checked(
    'count of signups',
    'GET /events/count.json',
    [200],
    () => ({ query: { filter: 'signup_success' } }),
    (a) => (reply, before) => {
      if (reply.status !== 200) return [];
      const keys = columnOf(before, 'outbox_events', a.siteId, 'key');
      const own = keys.filter((key) => key === 'signup_success').length;
      const count = reply.json<{ count: unknown }>().count;
      return count === own && own > 0 ? [] : [`counted ${String(count)}, A has ${own} signup events`];
    },
  ),
  'GET /invoices.json': all(
    checked(
      'list',
      'GET /invoices.json',
      [200],
      () => ({ query: { per_page: '200' } }),
      (a) => onlyA(a, 'invoices', 'uid', field('invoices'), (item) => (item as { uid: unknown }).uid, 2),
    ),
    checked(
      "B's subscription as the filter",
      'GET /invoices.json',
      [200],
      (b) => ({ query: { subscription_id: String(b.subscriptionId) } }),
      () => emptyList(field('invoices')),
    ),
    checked(
      "B's customer as the filter",
      'GET /invoices.json',
      [200],
      (b) => ({ query: { customer_ids: String(b.customerId) } }),
      () => emptyList(field('invoices')),
    ),
  ),
  'GET /invoices/events.json': custom("B's invoice", 'GET /invoices/events.json', [404], (b) => ({
    query: { invoice_uid: b.invoiceUid },
  })),
  'GET /credit_notes.json': all(
    checked(
      'list',
      'GET /credit_notes.json',
      [200],
      () => ({ query: { per_page: '200' } }),
      (a) => onlyA(a, 'credit_notes', 'uid', field('credit_notes'), (item) => (item as { uid: unknown }).uid),
    ),
    checked(
      "B's subscription as the filter",
      'GET /credit_notes.json',
      [200],
      (b) => ({ query: { subscription_id: String(b.subscriptionId) } }),
      () => emptyList(field('credit_notes')),
    ),
  ),
  'GET /stats.json': checked(
    "A's site only",
    'GET /stats.json',
    [200],
    () => ({}),
    (a) => (reply) => {
      const body = reply.json<{ site_id?: unknown; stats?: { total_subscriptions?: unknown } }>();
      return body.site_id === a.siteId ? [] : [`answered the statistics of site ${String(body.site_id)}`];
    },
  ),
  // B's subscription counts for nothing in A's MRR.
  'GET /mrr.json': checked(
    "B's subscription as the filter",
    'GET /mrr.json',
    [200],
    (b) => ({ query: { subscription_id: String(b.subscriptionId) } }),
    () => (reply) => {
      const amount = reply.json<{ mrr?: { amount_in_cents?: unknown } }>().mrr?.amount_in_cents;
      return amount === 0 ? [] : [`B's subscription gave an MRR of ${String(amount)}`];
    },
  ),
  'GET /subscriptions_mrr.json': all(
    checked(
      'list',
      'GET /subscriptions_mrr.json',
      [200],
      () => ({ query: { per_page: '200' } }),
      (a) =>
        onlyA(
          a,
          'subscriptions',
          'id',
          field('subscriptions_mrr'),
          (item) => (item as { subscription_id: unknown }).subscription_id,
          0,
        ),
    ),
    checked(
      "B's subscription as the filter",
      'GET /subscriptions_mrr.json',
      [200],
      (b) => ({ query: { filter: { subscription_ids: String(b.subscriptionId) } } }),
      () => emptyList(field('subscriptions_mrr')),
    ),
  ),
  'GET /mrr_movements.json': all(
    checked(
      'list',
      'GET /mrr_movements.json',
      [200],
      () => ({ query: { per_page: '50' } }),
      (a) =>
        onlyA(
          a,
          'subscriptions',
          'id',
          (body) => (body as { mrr?: { movements?: unknown[] } }).mrr?.movements ?? [],
          (item) => (item as { subscription_id: unknown }).subscription_id,
          0,
        ),
    ),
    checked(
      "B's subscription as the filter",
      'GET /mrr_movements.json',
      [200],
      (b) => ({ query: { subscription_id: String(b.subscriptionId) } }),
      () => emptyList((body) => (body as { mrr?: { movements?: unknown[] } }).mrr?.movements ?? []),
    ),
  ),
  ...Object.fromEntries(
    (['customers', 'subscriptions'] as const).map((resource): [string, CaseBuilder] => [
      `GET /${resource}/metadata.json`,
      all(
        checked(
          'list',
          `GET /${resource}/metadata.json`,
          [200],
          () => ({ query: { per_page: '200' } }),
          (a) => onlyA(a, 'metadata', 'id', field('metadata'), (item) => (item as { id: unknown }).id, 0),
        ),
        checked(
          `B's ${resource === 'customers' ? 'customer' : 'subscription'} as the filter`,
          `GET /${resource}/metadata.json`,
          [200],
          (b) => ({ query: { resource_ids: [String(resource === 'customers' ? b.customerId : b.subscriptionId)] } }),
          () => emptyList(field('metadata')),
        ),
      ),
    ]),
  ),
  'GET /subscriptions_components.json': all(
    checked(
      'list',
      'GET /subscriptions_components.json',
      [200],
      () => ({ query: { per_page: '200' } }),
      (a) =>
        onlyA(
          a,
          'subscriptions',
          'id',
          field('subscriptions_components'),
          (item) => (item as { subscription_id: unknown }).subscription_id,
          0,
        ),
    ),
    checked(
      "B's subscription as the filter",
      'GET /subscriptions_components.json',
      [200],
      (b) => ({ query: { subscription_ids: String(b.subscriptionId) } }),
      () => emptyList(field('subscriptions_components')),
    ),
    checked(
      "B's product family as the filter",
      'GET /subscriptions_components.json',
      [200],
      (b) => ({ query: { product_family_ids: String(b.familyId) } }),
      () => emptyList(field('subscriptions_components')),
    ),
  ),
  'GET /site.json': checked(
    "A's site only",
    'GET /site.json',
    [200],
    () => ({}),
    (a) => (reply) => {
      const site = reply.json<{ site?: { id?: unknown; subdomain?: unknown } }>().site;
      return site?.id === a.siteId && site.subdomain === a.site ? [] : [`answered the site ${JSON.stringify(site)}`];
    },
  ),
  'POST /payment_profiles.json': custom("B's customer", 'POST /payment_profiles.json', [404], (b) => ({
    body: { payment_profile: { customer_id: b.customerId, first_name: 'X', last_name: 'Y', ...CARD } },
  })),
  'GET /payment_profiles.json': all(
    checked(
      'list',
      'GET /payment_profiles.json',
      [200],
      () => ({ query: { per_page: '200' } }),
      (a) => onlyA(a, 'payment_profiles', 'id', bare, inner('payment_profile', 'id')),
    ),
    checked(
      "B's customer as the filter",
      'GET /payment_profiles.json',
      [200],
      (b) => ({ query: { customer_id: String(b.customerId) } }),
      () => emptyList(bare),
    ),
  ),
  'POST /invoices/payments.json': custom("B's open invoice", 'POST /invoices/payments.json', REFUSED, (b) => ({
    body: {
      payment: {
        amount: '1.00',
        memo: 'x',
        method: 'check',
        applications: [{ invoice_uid: b.openInvoiceUid, amount: '1.00' }],
      },
    },
  })),
  'GET /products_price_points.json': checked(
    'list',
    'GET /products_price_points.json',
    [200],
    () => ({ query: { per_page: '200' } }),
    (a) => onlyA(a, 'product_price_points', 'id', field('price_points'), (item) => (item as { id: unknown }).id),
  ),
  'GET /components_price_points.json': checked(
    'list',
    'GET /components_price_points.json',
    [200],
    () => ({ query: { per_page: '200' } }),
    (a) => onlyA(a, 'component_price_points', 'id', field('price_points'), (item) => (item as { id: unknown }).id),
  ),
  'POST /reason_codes.json': custom(
    "B's code (per site)",
    'POST /reason_codes.json',
    [201],
    (b) => ({ body: { reason_code: { code: extrasOf(b).reasonCode, description: 'A copy' } } }),
    'late',
  ),
  'GET /reason_codes.json': checked(
    'list',
    'GET /reason_codes.json',
    [200],
    () => ({ query: { per_page: '200' } }),
    (a) => onlyA(a, 'reason_codes', 'id', bare, inner('reason_code', 'id')),
  ),
  // An offer packages A's own records only: B's product, price point, component or coupon is refused.
  'POST /offers.json': all(
    custom("B's product id", 'POST /offers.json', REFUSED, (b) => ({
      body: { offer: { name: 'X', handle: 'x-offer-1', product_id: b.productId } },
    })),
    custom("B's product price point", 'POST /offers.json', REFUSED, (b, a) => ({
      body: {
        offer: { name: 'X', handle: 'x-offer-2', product_id: a.productId, product_price_point_id: b.pricePointId },
      },
    })),
    custom("B's component", 'POST /offers.json', REFUSED, (b, a) => ({
      body: {
        offer: { name: 'X', handle: 'x-offer-3', product_id: a.productId, components: [{ component_id: b.seatsId }] },
      },
    })),
    custom("B's coupon code", 'POST /offers.json', REFUSED, (b, a) => ({
      body: { offer: { name: 'X', handle: 'x-offer-4', product_id: a.productId, coupons: [b.couponCode] } },
    })),
    custom(
      "B's handle (per site)",
      'POST /offers.json',
      [201],
      (b, a) => ({ body: { offer: { name: 'A copy', handle: b.offerHandle, product_id: a.productId } } }),
      'late',
    ),
  ),
  'GET /offers.json': checked(
    'list',
    'GET /offers.json',
    [200],
    () => ({ query: { per_page: '200', include_archived: 'true' } }),
    (a) => onlyA(a, 'offers', 'id', field('offers'), (item) => (item as { id: unknown }).id),
  ),
  // An export is A's own job over A's own records: its row count is A's, whatever B holds.
  ...Object.fromEntries(
    (
      [
        ['subscriptions', 'subscriptions'],
        ['invoices', 'invoices'],
        ['proforma_invoices', 'proforma_invoices'],
      ] as const
    ).map(([kind, table]): [string, CaseBuilder] => [
      `POST /api_exports/${kind}.json`,
      checked(
        "A's own export",
        `POST /api_exports/${kind}.json`,
        [201],
        () => ({}),
        (a) => (reply, before) => {
          if (reply.status !== 201) return [];
          const own = columnOf(before, table, a.siteId, 'id').length;
          const count = reply.json<{ batchjob?: { row_count?: unknown } }>().batchjob?.row_count;
          return count === own ? [] : [`exported ${String(count)} rows, A has ${own} ${table}`];
        },
      ),
    ]),
  ),
  // A's own setting (already on): B's site row stays as it was.
  'PUT /webhooks/settings.json': custom("A's own setting", 'PUT /webhooks/settings.json', [200], () => ({
    body: { webhooks_enabled: true },
  })),
  // Routes naming B's records in the path whose bodies must be well formed for the lookup to be reached.
  'POST /coupons/:id/codes.json': namingBWith('POST /coupons/:id/codes.json', () => ({ body: { codes: ['ANEWSUB'] } })),
  'POST /proforma_invoices/:uid/void.json': namingBWith('POST /proforma_invoices/:uid/void.json', () => ({
    body: { void: { reason: 'stolen' } },
  })),
  'PUT /coupons/:id/codes.json': namingBWith('PUT /coupons/:id/codes.json', () => ({ body: { codes: ['ANEWSUB'] } })),
  'POST /products/:id/price_points.json': namingBWith('POST /products/:id/price_points.json', () => ({
    body: { price_point: { name: 'X', handle: 'x-tier', price_in_cents: 100, interval: 1, interval_unit: 'month' } },
  })),
  'POST /products/:id/price_points/bulk.json': namingBWith('POST /products/:id/price_points/bulk.json', () => ({
    body: {
      price_points: [{ name: 'X', handle: 'x-bulk', price_in_cents: 100, interval: 1, interval_unit: 'month' }],
    },
  })),
  'PUT /products/:id/price_points/:price_point_id.json': namingBWith(
    'PUT /products/:id/price_points/:price_point_id.json',
    () => ({ body: { price_point: { name: 'Renamed' } } }),
  ),
  'PUT /reason_codes/:id.json': namingBWith('PUT /reason_codes/:id.json', () => ({
    body: { reason_code: { description: 'changed' } },
  })),
  'POST /subscriptions/:id/prepayments.json': namingBWith('POST /subscriptions/:id/prepayments.json', () => ({
    body: { prepayment: { amount: '1.00', memo: 'm', details: 'd', method: 'check' } },
  })),
  'POST /subscriptions/:id/prepayments/:prepayment_id/refunds.json': namingBWith(
    'POST /subscriptions/:id/prepayments/:prepayment_id/refunds.json',
    () => ({ body: { refund: { amount: '1.00', memo: 'm', external: true } } }),
  ),
  'POST /subscriptions/:id/service_credits.json': namingBWith('POST /subscriptions/:id/service_credits.json', () => ({
    body: { service_credit: { amount: '1.00', memo: 'm' } },
  })),
  'POST /subscriptions/:id/service_credit_deductions.json': namingBWith(
    'POST /subscriptions/:id/service_credit_deductions.json',
    () => ({ body: { deduction: { amount: '1.00', memo: 'm' } } }),
  ),
  'POST /subscriptions/:id/add_coupon.json': namingBWith('POST /subscriptions/:id/add_coupon.json', (b) => ({
    body: { codes: [b.couponCode] },
  })),
  'DELETE /subscriptions/:id/remove_coupon.json': namingBWith('DELETE /subscriptions/:id/remove_coupon.json', (b) => ({
    query: { coupon_code: b.couponCode },
  })),
  'PUT /subscriptions/:id/override.json': namingBWith('PUT /subscriptions/:id/override.json', () => ({
    body: { subscription: { cancellation_message: 'overridden' } },
  })),
  'POST /subscriptions/:id/renewals/preview.json': namingBWith('POST /subscriptions/:id/renewals/preview.json', () => ({
    body: {},
  })),
  // Clears A's own test data: B's must stay. Run last (see the ordering below).
  'POST /sites/clear_data.json': custom('clears only A', 'POST /sites/clear_data.json', [200], () => ({}), 'last'),
  ...Object.fromEntries(
    (['customers', 'subscriptions'] as const).flatMap((resource): [string, CaseBuilder][] => {
      const field = (w: SiteWorld) => (resource === 'customers' ? w.customerFieldName : w.subscriptionFieldName);
      return [
        [
          `POST /${resource}/metafields.json`,
          custom(
            "B's field name (per site)",
            `POST /${resource}/metafields.json`,
            [201],
            (b) => ({ body: { metafields: { name: field(b) } } }),
            'late',
          ),
        ],
        [`GET /${resource}/metafields.json`, custom('list', `GET /${resource}/metafields.json`, [200], () => ({}))],
        [
          `PUT /${resource}/metafields.json`,
          custom("B's field", `PUT /${resource}/metafields.json`, [404], (b) => ({
            body: { metafields: { current_name: field(b), name: 'stolen' } },
          })),
        ],
        [
          `DELETE /${resource}/metafields.json`,
          custom("B's field", `DELETE /${resource}/metafields.json`, [404], (b) => ({ query: { name: field(b) } })),
        ],
      ];
    }),
  ),
};

/** Extra cases: A's own record in the path, B's in another place (a nested id, the body, the query). */
const MIXED: readonly CaseBuilder[] = [
  // A's component with B's component price point: every route that names one.
  ...(
    [
      ['GET', ''],
      ['PUT', ''],
      ['DELETE', ''],
      ['PUT', '/unarchive'],
      ['PUT', '/default'],
    ] as const
  ).map(([method, tail]) =>
    ownWith(
      "A's component, B's component price point",
      `${method} /components/:id/price_points/:price_point_id${tail}.json`,
      [404],
      (b) => ({
        params: { price_point_id: String(extrasOf(b).componentPricePointId) },
        ...(method === 'PUT' && tail === '' ? { body: { price_point: { name: 'Renamed' } } } : {}),
      }),
    ),
  ),
  ownWith("A's product, B's price point", 'GET /products/:id/price_points/:price_point_id.json', [404], (b) => ({
    params: { price_point_id: String(extrasOf(b).pricePointId) },
  })),
  ownWith("A's product, B's price point", 'PUT /products/:id/price_points/:price_point_id.json', [404], (b) => ({
    params: { price_point_id: String(extrasOf(b).pricePointId) },
    body: { price_point: { name: 'Renamed' } },
  })),
  ownWith("A's product, B's price point", 'DELETE /products/:id/price_points/:price_point_id.json', [404], (b) => ({
    params: { price_point_id: String(extrasOf(b).pricePointId) },
  })),
  ownWith(
    "A's product, B's price point",
    'PATCH /products/:id/price_points/:price_point_id/default.json',
    [404],
    (b) => ({ params: { price_point_id: String(extrasOf(b).pricePointId) } }),
  ),
  ownWith("A's coupon, B's subcode", 'DELETE /coupons/:id/codes/:subcode.json', [404], (b) => ({
    params: { subcode: extrasOf(b).subcode },
  })),
  ownWith("A's family, B's coupon", 'GET /product_families/:fid/coupons/:id/usage.json', [404], (b) => ({
    params: { id: String(b.couponId) },
  })),
  ownWith(
    "A's subscription, B's prepayment",
    'POST /subscriptions/:id/prepayments/:prepayment_id/refunds.json',
    [404],
    (b) => ({
      params: { prepayment_id: String(extrasOf(b).prepaymentId) },
      body: { refund: { amount: '1.00', memo: 'm', external: true } },
    }),
  ),
  ownWith(
    "A's subscription, B's payment profile",
    'POST /subscriptions/:id/payment_profiles/:payment_profile_id/change_payment_profile.json',
    [404],
    (b) => ({ params: { payment_profile_id: String(b.paymentProfileId) } }),
  ),
  ownWith(
    "A's subscription, B's payment profile",
    'DELETE /subscriptions/:id/payment_profiles/:payment_profile_id.json',
    [404],
    (b) => ({ params: { payment_profile_id: String(b.paymentProfileId) } }),
  ),
  ownWith("A's subscription, B's coupon code", 'POST /subscriptions/:id/add_coupon.json', REFUSED, (b) => ({
    body: { codes: [b.couponCode] },
  })),
  ownWith("A's subscription, B's subcode", 'POST /subscriptions/:id/add_coupon.json', REFUSED, (b) => ({
    body: { codes: [extrasOf(b).subcode] },
  })),
  ownWith("A's subscription, B's coupon code", 'DELETE /subscriptions/:id/remove_coupon.json', REFUSED, (b) => ({
    query: { coupon_code: b.couponCode },
  })),
  ownWith("B's export id as A's", 'GET /api_exports/subscriptions/:batch_id/rows.json', [404], (b) => ({
    params: { batch_id: String(extrasOf(b).subscriptionExportId) },
  })),
  ownWith("B's reason code on A's cancel", 'DELETE /subscriptions/:id.json', REFUSED, (b) => ({
    body: { subscription: { reason_code: extrasOf(b).reasonCode } },
  })),
  custom("A's subscription, B's component", 'POST /subscriptions/:id/components/:cid/allocations.json', [404], (b) => ({
    params: { cid: String(b.seatsId) },
    body: { allocation: { quantity: 1 } },
  })),
  custom(
    "A's subscription, B's component handle",
    'GET /subscriptions/:id/components/:cid/allocations.json',
    [404],
    (b) => ({ params: { cid: `handle:${b.seatsHandle}` } }),
  ),
  custom("A's subscription, B's component", 'POST /subscriptions/:id/allocations.json', REFUSED, (b) => ({
    body: { allocations: [{ component_id: b.seatsId, quantity: 1 }] },
  })),
  custom("A's subscription, B's component", 'POST /subscriptions/:id/allocations/preview.json', REFUSED, (b) => ({
    body: { allocations: [{ component_id: b.seatsId, quantity: 1 }] },
  })),
  custom(
    "A's subscription, B's metered component",
    'POST /subscriptions/:id/components/:cid/usages.json',
    [404],
    (b) => ({
      params: { cid: String(b.callsId) },
      body: { usage: { quantity: 1 } },
    }),
  ),
  custom(
    "A's subscription, B's metered component",
    'GET /subscriptions/:id/components/:cid/usages.json',
    [404],
    (b) => ({
      params: { cid: String(b.callsId) },
    }),
  ),
  custom("A's subscription, B's component", 'GET /subscriptions/:id/components/:cid.json', [404], (b) => ({
    params: { cid: String(b.seatsId) },
  })),
  custom("A's subscription, B's payment", 'POST /subscriptions/:id/refunds.json', REFUSED, (b) => ({
    body: { refund: { payment_id: b.signupPaymentId, amount: '0.01', memo: 'x' }, external: 1 },
  })),
  custom("A's subscription, B's product handle", 'POST /subscriptions/:id/migrations.json', REFUSED, (b) => ({
    body: { migration: { product_handle: b.productHandle } },
  })),
  custom("A's subscription, B's product id", 'POST /subscriptions/:id/migrations/preview.json', REFUSED, (b) => ({
    body: { migration: { product_id: b.productId } },
  })),
  custom("A's subscription, B's product handle", 'PUT /subscriptions/:id.json', REFUSED, (b) => ({
    body: { subscription: { product_handle: b.productHandle } },
  })),
  custom("A's subscription, B's product id (delayed)", 'POST /subscriptions/:id.json', REFUSED, (b) => ({
    body: { subscription: { product_id: b.productId, product_change_delayed: true } },
  })),
  custom("A's subscription, B's note", 'GET /subscriptions/:id/notes/:note_id.json', [404], (b) => ({
    params: { note_id: String(b.noteId) },
  })),
  custom("A's subscription, B's note", 'PUT /subscriptions/:id/notes/:note_id.json', [404], (b) => ({
    params: { note_id: String(b.noteId) },
    body: { note: { body: 'stolen' } },
  })),
  custom("A's subscription, B's note", 'DELETE /subscriptions/:id/notes/:note_id.json', [404], (b) => ({
    params: { note_id: String(b.noteId) },
  })),
  custom("A's customer, B's field", 'POST /customers/:id/metadata.json', REFUSED, (b) => ({
    body: { metadata: { name: b.customerFieldName, value: 'stolen' } },
  })),
  custom("A's subscription, B's field", 'DELETE /subscriptions/:id/metadata.json', [404], (b) => ({
    query: { name: b.subscriptionFieldName },
  })),
  custom("A's family, B's component", 'GET /product_families/:fid/components/:id.json', [404], (b) => ({
    params: { id: String(b.seatsId) },
  })),
  custom("A's family, B's component", 'PUT /product_families/:fid/components/:id.json', [404], (b) => ({
    params: { id: String(b.seatsId) },
    body: { component: { name: 'stolen' } },
  })),
  custom("A's family, B's component", 'DELETE /product_families/:fid/components/:id.json', [404], (b) => ({
    params: { id: String(b.seatsId) },
  })),
  custom("B's family by handle", 'GET /product_families/:id/products.json', [404], (b) => ({
    params: { id: `handle:${b.familyHandle}` },
  })),
  custom("A's family, B's code", 'GET /product_families/:id/coupons/validate.json', [404], (b) => ({
    query: { code: b.couponCode },
  })),
  custom(
    "A's family in the path, B's in the body (the path wins)",
    'POST /product_families/:id/coupons.json',
    [201],
    (b) => ({
      body: { coupon: { name: 'X', code: 'APATHWINS', percentage: '5', product_family_id: b.familyId } },
    }),
  ),
  custom("A's family, B's coupon", 'GET /product_families/:fid/coupons/:id.json', [404], (b) => ({
    params: { id: String(b.couponId) },
  })),
  custom("A's family, B's coupon", 'PUT /product_families/:fid/coupons/:id.json', [404], (b) => ({
    params: { id: String(b.couponId) },
    body: { coupon: { name: 'stolen', code: 'STOLEN', percentage: '50' } },
  })),
  custom("A's family, B's coupon", 'DELETE /product_families/:fid/coupons/:id.json', [404], (b) => ({
    params: { id: String(b.couponId) },
  })),
  custom("B's family, A's coupon", 'GET /product_families/:fid/coupons/:id.json', [404], (b, a) => ({
    params: { fid: String(b.familyId), id: String(a.couponId) },
  })),
  custom("B's family by handle", 'GET /product_families/:id/coupons.json', [404], (b) => ({
    params: { id: `handle:${b.familyHandle}` },
  })),
  custom("B's component by handle", 'PUT /components/:id.json', [404], (b) => ({
    params: { id: `handle:${b.seatsHandle}` },
    body: { component: { name: 'stolen' } },
  })),
  custom("B's invoice as HTML", 'GET /invoices/:uid', [404], (b) => ({ params: { uid: `${b.invoiceUid}.html` } })),
  custom("B's open invoice", 'POST /invoices/:uid/payments.json', [404], (b) => ({
    params: { uid: b.openInvoiceUid },
    body: { payment: { amount: '0.50', memo: 'stolen' } },
  })),
  custom("B's open invoice", 'POST /invoices/:uid/void.json', [404], (b) => ({
    params: { uid: b.openInvoiceUid },
    body: { void: { reason: 'stolen' } },
  })),
  custom("A's invoice, B's payment", 'POST /invoices/:uid/refunds.json', REFUSED, (b) => ({
    body: { refund: { amount: '0.01', memo: 'x', payment_id: b.signupPaymentId } },
  })),
];

// ---------------------------------------------------------------------------------------------
// Direct post and hosted pages: A's direct credentials or A's host, B's records.

const RETURN = 'https://merchant.example.com/return';
const DIRECT_HOST = (f: HttpFixture) => `api.localhost:${f.port}`;

function aCall(callId: string): DumpAllowance {
  return {
    name: "A's call record",
    why: 'a refused direct post is recorded as a failed call of the credentials’ site, by design (spec §4 flow)',
    table: 'direct_calls',
    change: 'insert',
    row: (row) => row.id === callId && row.success === 0,
  };
}

function aNonce(a: SiteWorld): DumpAllowance {
  return {
    name: "A's nonce claim",
    why: 'spec §5 rule 5: a signed post is spent whatever its outcome',
    table: 'direct_post_claims',
    change: 'insert',
    row: (row) => row.site_id === a.siteId,
  };
}

function directForm(
  f: HttpFixture,
  a: SiteWorld,
  data: NonNullable<Parameters<typeof buildSecureFields>[0]['data']>,
  fields: Record<string, string>,
): string {
  const secure = buildSecureFields({
    apiId: a.direct.apiId,
    apiSecret: a.direct.apiSecret,
    data,
    redirectUri: RETURN,
    now: f.clock.now(),
  });
  return new URLSearchParams([...Object.entries(secure.fields), ...Object.entries(fields)]).toString();
}

function redirectRefused(reply: HttpReply): boolean {
  const code = new URL(String(reply.headers.location)).searchParams.get('result_code');
  return code !== null && code !== '2000';
}

const DIRECT_AND_HOSTED: Readonly<Record<string, CaseBuilder>> = {
  'POST /api/v2/signups': (f, a, b) => [
    {
      name: "A's signed signup for B's product",
      request: {
        method: 'POST',
        path: '/api/v2/signups',
        headers: { host: DIRECT_HOST(f), 'content-type': 'application/x-www-form-urlencoded' },
        body: directForm(
          f,
          a,
          { signup: { product: { handle: b.productHandle } } },
          {
            'signup[customer][first_name]': 'X',
            'signup[customer][last_name]': 'Y',
            'signup[customer][email]': 'x@example.com',
            'signup[payment_profile][card_number]': '4111111111111111',
            'signup[payment_profile][expiration_month]': '12',
            'signup[payment_profile][expiration_year]': '2030',
          },
        ),
      },
      expect: [303],
      refusedRedirect: redirectRefused,
    },
  ],
  'POST /api/v2/signups.json': (f, a, b) => [
    {
      name: "A's JSON signup for B's customer",
      request: {
        method: 'POST',
        path: '/api/v2/signups.json',
        headers: {
          host: DIRECT_HOST(f),
          'content-type': 'application/json',
          authorization: basic(a.direct.apiId, a.direct.apiPassword),
        },
        body: JSON.stringify({ signup: { product: { handle: a.productHandle }, customer_id: b.customerId } }),
      },
      expect: [404, 422],
    },
  ],
  'POST /api/v2/subscriptions/:id/card_update': (f, a, b) => [
    {
      name: "A's signed card update of B's subscription",
      request: {
        method: 'POST',
        path: `/api/v2/subscriptions/${b.subscriptionId}/card_update`,
        headers: { host: DIRECT_HOST(f), 'content-type': 'application/x-www-form-urlencoded' },
        body: directForm(
          f,
          a,
          { subscription_id: String(b.subscriptionId) },
          {
            'payment_profile[card_number]': '4111111111111111',
            'payment_profile[expiration_month]': '11',
            'payment_profile[expiration_year]': '2031',
          },
        ),
      },
      expect: [303],
      refusedRedirect: redirectRefused,
    },
  ],
  // The public how-to at the root: it names no site's records, so it shows nothing of B's and changes nothing.
  'GET /': (f, a) => [
    {
      name: "the root on A's host with A's key",
      request: {
        method: 'GET',
        path: '/',
        headers: { host: `${a.site}.localhost:${f.port}`, authorization: basic(a.apiKey, 'x') },
      },
      expect: [200],
    },
  ],
  // The API reference (public): the document, its page and the page's script name no site's records.
  ...Object.fromEntries(
    (
      [
        ['/openapi.json', [200]],
        ['/docs', [200]],
        // 404 when @scalar/api-reference is not installed beside the server.
        ['/docs/api-reference.js', [200, 404]],
      ] as const
    ).map(([path, statuses]): [string, CaseBuilder] => [
      `GET ${path}`,
      (f, a) => [
        {
          name: `${path} on A's host with A's key`,
          request: {
            method: 'GET',
            path,
            headers: { host: `${a.site}.localhost:${f.port}`, authorization: basic(a.apiKey, 'x') },
          },
          expect: statuses,
        },
      ],
    ]),
  ),
  // The operations routes (health, readiness, metrics): no site's records, counts by route pattern only.
  ...Object.fromEntries(
    ['/healthz', '/readyz', '/metrics'].map((path): [string, CaseBuilder] => [
      `GET ${path}`,
      (f, a) => [
        {
          name: `${path} on A's host with A's key`,
          request: {
            method: 'GET',
            path,
            headers: { host: `${a.site}.localhost:${f.port}`, authorization: basic(a.apiKey, 'x') },
          },
          expect: [200],
        },
      ],
    ]),
  ),
  'GET /api/v2/calls/:id': (f, a, b) => [
    {
      name: "A's direct credentials, B's call",
      request: {
        method: 'GET',
        path: `/api/v2/calls/${b.callId}`,
        headers: { host: DIRECT_HOST(f), authorization: basic(a.direct.apiId, a.direct.apiPassword) },
      },
      expect: [404],
    },
  ],
  'GET /update_payment/:id/:token': (f, a, b) => [
    page(
      f,
      a,
      'GET',
      `/update_payment/${b.subscriptionId}/${hostedPageToken('update_payment', b.subscriptionId, a.sharedKey)}`,
    ),
    page(f, a, 'GET', b.cardUpdatePath),
  ],
  'POST /update_payment/:id/:token': (f, a, b) => [
    page(
      f,
      a,
      'POST',
      `/update_payment/${b.subscriptionId}/${hostedPageToken('update_payment', b.subscriptionId, a.sharedKey)}`,
      'full_number=4111111111111111&expiration_month=10&expiration_year=2032',
    ),
    page(f, a, 'POST', b.cardUpdatePath, 'full_number=4111111111111111&expiration_month=10&expiration_year=2032'),
  ],
  'GET /portal/:customerId/:expires/:signature': (f, a, b) => [
    page(f, a, 'GET', createPortalLink({ customerId: b.customerId, sharedKey: a.sharedKey, now: f.clock.now() }).path),
    page(f, a, 'GET', b.portalPath),
  ],
  'POST /portal/:customerId/:expires/:signature/:action': (f, a, b) => [
    ...['cancel', 'change_plan', 'update_card', 'allocate', 'undo_cancel'].map((action) =>
      page(
        f,
        a,
        'POST',
        `${a.portalPath}/${action}`,
        `subscription_id=${b.subscriptionId}&product_id=${b.otherProductId}`,
      ),
    ),
    page(f, a, 'POST', `${b.portalPath}/cancel`, `subscription_id=${b.subscriptionId}`),
  ],
  // An invoice's PDF under a portal link: only the link's own customer's invoices, on the link's own site.
  'GET /portal/:customerId/:expires/:signature/invoices/:file': (f, a, b) => [
    page(f, a, 'GET', `${a.portalPath}/invoices/${b.invoiceUid}.pdf`),
    page(f, a, 'GET', `${a.portalPath}/invoices/${b.openInvoiceUid}.pdf`),
    page(
      f,
      a,
      'GET',
      `${createPortalLink({ customerId: b.customerId, sharedKey: a.sharedKey, now: f.clock.now() }).path}/invoices/${b.invoiceUid}.pdf`,
    ),
    page(f, a, 'GET', `${b.portalPath}/invoices/${b.invoiceUid}.pdf`),
  ],
  'ALL /update_payment/*': (f, a, b) => [page(f, a, 'GET', `/update_payment/${b.subscriptionId}`)],
  'ALL /portal/*': (f, a, b) => [page(f, a, 'POST', `/portal/${b.customerId}`, 'a=1')],
};

/** A hosted page request on A's host: refused with the 404 page. */
function page(f: HttpFixture, a: SiteWorld, method: string, path: string, form?: string): IsolationCase {
  return {
    name: `${method} ${path.slice(0, 60)} on A's host`,
    request: {
      method,
      path,
      headers: {
        host: `${a.site}.localhost:${f.port}`,
        accept: 'text/html',
        ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(form === undefined ? {} : { body: form }),
    },
    expect: [404],
  };
}

/** Every route's cases: the explicit ones, or the default "every path value is B's" for a route with a path parameter. */
function casesFor(key: string): CaseBuilder | undefined {
  const explicit = SITE_WIDE[key] ?? DIRECT_AND_HOSTED[key];
  if (explicit !== undefined) return explicit;
  if (key.startsWith('ALL ')) return undefined;
  return patternParams(pathOfKey(key)).length > 0 ? namingB(key) : undefined;
}

/** A word with B's marker in it (B is globex: see `markerOf`). */
const MARKED = new RegExp(`[\\w.@+-]*${markerOf('globex')}[\\w.@+-]*`, 'gi');

/** The marked words in a site's rows (names, handles, emails, codes, texts inside JSON payloads). */
function markedWords(dump: DatabaseDump, siteId: number): Set<string> {
  const words = new Set<string>();
  for (const table of Object.values(siteSlice(dump, siteId).tables)) {
    for (const row of table.rows) {
      for (const cell of row) {
        if (typeof cell === 'string') for (const word of cell.match(MARKED) ?? []) words.add(word.toLowerCase());
      }
    }
  }
  return words;
}

/**
 * B's data that shows in `text`: B's keys, secrets and codes, and every marked word (B's marker is
 * in all of B's texts) that neither A's own rows hold (A may have made a record of its own with B's
 * name: names are per site) nor the request sent itself (a "not found" may echo what it was sent).
 */
function leaks(text: string, sent: string, b: SiteWorld, dump: DatabaseDump, aSiteId: number): string[] {
  const found: string[] = [];
  const own = markedWords(dump, aSiteId);
  const sentWords = new Set((sent.match(MARKED) ?? []).map((word) => word.toLowerCase()));
  for (const word of text.match(MARKED) ?? []) {
    const lower = word.toLowerCase();
    if (!own.has(lower) && !sentWords.has(lower)) found.push(`B's ${word}`);
  }
  for (const secret of b.secrets) {
    if (secret !== '' && text.includes(secret) && !sent.includes(secret))
      found.push(`B's secret ${secret.slice(0, 8)}…`);
  }
  return found;
}

function sentText(request: RawRequest): string {
  const body = typeof request.body === 'string' ? request.body : (request.body?.toString('utf8') ?? '');
  const path = decodeURIComponent(request.path.replaceAll(/%(?![0-9a-f]{2})/gi, '%25'));
  // A path's last segment is read without its `.json` (`handle:x.json` names `x`), and may be echoed so.
  return `${path} ${path.replaceAll('.json', ' ')} ${body} ${request.path}`;
}

async function runCase(
  f: HttpFixture,
  c: IsolationCase,
  a: SiteWorld,
  b: SiteWorld,
  dump: () => DatabaseDump,
  before: DatabaseDump,
): Promise<DatabaseDump> {
  const reply = await f.raw(c.request);
  const after = dump();
  const label = `${c.name}\n${describeRequest(c.request)}\n→ ${reply.status} ${reply.text.slice(0, 400)}`;
  expect.soft(c.expect, label).toContain(reply.status);
  expect
    .soft(leaks(`${reply.text} ${JSON.stringify(reply.headers)}`, sentText(c.request), b, before, a.siteId), label)
    .toEqual([]);
  const refused = reply.status >= 400 || c.refusedRedirect?.(reply);
  if (reply.status === 303)
    expect.soft(c.refusedRedirect?.(reply), `${label}: the redirect reports success`).toBe(true);
  const changes = diffDumps(before, after);
  if (refused || (c.request.method ?? 'GET') === 'GET') {
    let allowances = c.allowances ?? [];
    const callId =
      reply.status === 303
        ? new URL(String(reply.headers.location)).searchParams.get('call_id')
        : (reply.headers['x-direct-call-id'] as string | undefined);
    if (typeof callId === 'string' && callId !== '') allowances = [...allowances, aCall(callId)];
    if (c.request.path.startsWith('/api/v2/')) allowances = [...allowances, aNonce(a)];
    const unexpected = unexpectedChanges(changes, allowances);
    expect.soft(unexpected.length, `${label}\nchanged the database:\n${describeChanges(unexpected)}`).toBe(0);
  }
  // Whatever A did, B's rows are as they were.
  const bChanges = diffDumps(siteSlice(before, b.siteId), siteSlice(after, b.siteId));
  expect.soft(bChanges.length, `${label}\nchanged B's rows:\n${describeChanges(bChanges)}`).toBe(0);
  expect.soft(f.logged, label).toEqual([]);
  if (c.check !== undefined) expect.soft(c.check(reply, before), label).toEqual([]);
  return after;
}

describe('isolation matrix: every route, site A with site B’s ids', () => {
  const http = useHttpFixture({ rateLimit: false, storage: 'sqlite-file', webhooks: { fetch: noNetworkFetch } });

  it('every route of the app has a case in the matrix', () => {
    const missing = appRoutes(http().app)
      .map((route) => route.key)
      .filter((key) => casesFor(key) === undefined);
    expect(missing).toEqual([]);
  });

  it("A's key on A's host naming B's records: 404 (or a 422 for a body), nothing of B's shown, nothing changed", async () => {
    const f = http();
    const [a, b] = await seedBoth(f);
    if (f.databaseFile === undefined) throw new Error('sqlite-file fixture expected');
    const dumper = openDatabaseDumper(f.databaseFile);
    const routes = appRoutes(f.app);
    const cases: { key: string; c: IsolationCase }[] = MIXED.flatMap((build) =>
      build(f, a, b).map((c) => ({ key: 'mixed', c })),
    );
    for (const route of routes) {
      const build = casesFor(route.key);
      if (build === undefined) throw new Error(`no isolation case for ${route.key}`);
      for (const c of build(f, a, b)) cases.push({ key: route.key, c });
    }
    const rank = (c: IsolationCase) => (c.order === 'last' ? 2 : c.order === 'late' ? 1 : 0);
    cases.sort((x, y) => rank(x.c) - rank(y.c));
    const covered = new Set<string>();
    try {
      let current = dumper.dump();
      for (const { key, c } of cases) {
        current = await runCase(f, c, a, b, () => dumper.dump(), current);
        covered.add(key);
      }
    } finally {
      dumper.close();
    }
    covered.delete('mixed');
    expect(covered.size).toBe(routes.length);
    expect(cases.length).toBeGreaterThan(routes.length + MIXED.length);
  }, 120_000);

  it("a site's key on the other site's host: 401 on every main-API route, nothing read, nothing changed", async () => {
    const f = http();
    const [a, b] = await seedBoth(f);
    if (f.databaseFile === undefined) throw new Error('sqlite-file fixture expected');
    const dumper = openDatabaseDumper(f.databaseFile);
    // The main API: every route behind the key middleware (not the public routes, and not the direct-post
    // and hosted routes, whose credentials are not API keys; their wrong-credential cases are in the
    // direct-post and hosted tests).
    const api = appRoutes(f.app).filter(
      (route) =>
        route.key !== 'GET /' &&
        !PUBLIC_ROUTES.includes(route.key) &&
        !route.key.includes(' /api/v2/') &&
        !route.key.includes(' /update_payment/') &&
        !(route.key.includes(' /portal/') && !route.key.includes(' /portal/customers/')),
    );
    expect(api.length).toBeGreaterThan(90);
    try {
      const before = dumper.dump();
      for (const route of api) {
        for (const [owner, intruder] of [
          [a, b],
          [b, a],
        ] as const) {
          // The owner's own ids and a well-formed body, sent to the owner's host with the intruder's key.
          const own = template(route.key, owner);
          const t = { ...own, params: { ...extraParams(route.key, owner), ...own.params } };
          const request = apiRequest(f, owner, route.key, t, { kind: 'valid' }, { apiKey: intruder.apiKey });
          const reply = await f.raw(request);
          const label = `${describeRequest(request)} with ${intruder.site}'s key\n→ ${reply.status} ${reply.text}`;
          expect(reply.status, label).toBe(401);
          // Exactly the access-denied text: nothing of the owner's data, not even whether the id exists.
          expect(reply.text, label).toBe('HTTP Basic: Access denied.\n');
        }
      }
      const changes = diffDumps(before, dumper.dump());
      expect(changes.length, describeChanges(changes)).toBe(0);
    } finally {
      dumper.close();
    }
    expect(f.logged).toEqual([]);
  }, 120_000);
});
