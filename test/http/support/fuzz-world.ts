/**
 * A populated site for the route-walking tests (fuzz and isolation matrix): one of everything every
 * route can name, seeded through the engine, each text carrying the site's marker so that a
 * response showing another site's data is found by a plain substring search.
 */
import { createPortalLink, type IssuedDirectCredentials } from 'billing-engine';
import { buildSecureFields, hostedPageToken, parseDirectForm } from 'billing-engine/chargify';
import type { HttpFixture } from './http-fixture.js';

/** The site names of the fixture. */
export type SiteName = 'acme' | 'globex';

/** Everything of one site that a route can name. */
export interface SiteWorld {
  readonly site: SiteName;
  readonly siteId: number;
  /** Lower-case text in every free-text value of this site (names, emails, handles, codes...). */
  readonly marker: string;
  readonly apiKey: string;
  readonly sharedKey: string;
  readonly direct: IssuedDirectCredentials;
  readonly familyId: number;
  readonly familyHandle: string;
  readonly productId: number;
  readonly productHandle: string;
  /** A second product of the same family: a migration or product-change target. */
  readonly otherProductId: number;
  readonly otherProductHandle: string;
  readonly seatsId: number;
  readonly seatsHandle: string;
  readonly callsId: number;
  readonly supportId: number;
  readonly couponId: number;
  readonly couponCode: string;
  readonly customerFieldName: string;
  readonly subscriptionFieldName: string;
  readonly customerId: number;
  readonly customerEmail: string;
  readonly customerReference: string;
  /** A customer without subscriptions (deletable). */
  readonly loneCustomerId: number;
  readonly subscriptionId: number;
  readonly paymentProfileId: number;
  /** A second card of the customer, not the subscription's default (a change-default or delete target). */
  readonly otherPaymentProfileId: number;
  /** A catalog price point of the product (not its default). */
  readonly pricePointId: number;
  readonly reasonCodeId: number;
  /** The code of that reason code (a site with reason codes takes only its own in cancellations). */
  readonly reasonCode: string;
  /** A subcode of the coupon. */
  readonly couponSubcode: string;
  /** An offer of the product with the seats component and the coupon. */
  readonly offerId: number;
  readonly offerHandle: string;
  /** A prepayment of the subscription (refundable). */
  readonly prepaymentId: number;
  /** The batch ids of a subscriptions export and of an invoices export. */
  readonly subscriptionsExportId: number;
  readonly invoicesExportId: number;
  readonly signupPaymentId: number;
  readonly referralCode: string;
  readonly noteId: number;
  readonly endpointId: number;
  readonly endpointUrl: string;
  readonly webhookId: number;
  readonly callId: number | string;
  /** The signup's invoice (paid by the signup payment; refunded in part, see `creditNoteUid`). */
  readonly invoiceUid: string;
  /** An ad-hoc invoice, issued open and unpaid (voidable, payable). */
  readonly openInvoiceUid: string;
  /** The credit note of a partial refund of the signup invoice. */
  readonly creditNoteUid: string;
  /** The subscription's first statement. */
  readonly statementId: number;
  /** `/update_payment/{id}/{token}` of the subscription, with this site's shared key. */
  readonly cardUpdatePath: string;
  /** The customer's signed billing-portal path. */
  readonly portalPath: string;
  /** Exact values of this site that must never show on another site (keys, codes, generated ids). */
  readonly secrets: readonly string[];
}

/** The site's marker: `acmeown` for acme, `glxsecret` for globex. */
export function markerOf(site: SiteName): string {
  return site === 'acme' ? 'acmeown' : 'glxsecret';
}

/**
 * Seeds `site` through the engine: settings (referrals and webhooks on), a webhook endpoint, a
 * family with two products and three components, a coupon, two custom fields, a subscription with
 * allocations, usage, values, a note, webhooks, a lone customer, and a recorded direct-post call.
 */
export async function seedSiteWorld(f: HttpFixture, site: SiteName): Promise<SiteWorld> {
  const m = markerOf(site);
  const created = f.sites[site];
  await f.engine.sites.update(site, {
    settings: {
      referralsEnabled: true,
      webhooksEnabled: true,
      portal: { allowPlanChange: true, allowCancel: true, allowCardUpdate: true, allowComponentChange: true },
    },
  });
  const h = f.engine.site(site);
  const endpointUrl = `https://hooks-${m}.example.com/receive`;
  const endpoint = await h.webhooks.createEndpoint({
    url: endpointUrl,
    webhookSubscriptions: ['signup_success', 'subscription_state_change', 'payment_success'],
  });
  const family = await h.catalog.createFamily({ name: `${m} Plans`, handle: `${m}-plans`, description: `${m} family` });
  const product = await h.catalog.createProduct(family.id, {
    name: `${m} Pro`,
    handle: `${m}-pro`,
    description: `${m} product`,
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  const other = await h.catalog.createProduct(family.id, {
    name: `${m} Basic`,
    handle: `${m}-basic`,
    priceInCents: 500,
    interval: 1,
    intervalUnit: 'month',
  });
  const seats = await h.components.create(family.id, {
    kind: 'quantity_based_component',
    name: `${m} Seats`,
    handle: `${m}-seats`,
    unitName: `${m}-seat`,
    unitPrice: '5',
  });
  const calls = await h.components.create(family.id, {
    kind: 'metered_component',
    name: `${m} Calls`,
    handle: `${m}-calls`,
    unitName: `${m}-call`,
    unitPrice: '0.01',
  });
  const support = await h.components.create(family.id, {
    kind: 'on_off_component',
    name: `${m} Support`,
    handle: `${m}-support`,
    unitPrice: '3',
  });
  const couponCode = `${m.toUpperCase()}CODE`;
  const coupon = await h.coupons.create({
    name: `${m} coupon`,
    code: couponCode,
    description: `${m} coupon text`,
    percentage: '10',
    productFamilyId: family.id,
  });
  const customerFieldName = `${m}_tier`;
  const subscriptionFieldName = `${m}_color`;
  await h.metafields.createFields('customer', { name: customerFieldName });
  await h.metafields.createFields('subscription', { name: subscriptionFieldName });
  const customerEmail = `${m}-customer@example.com`;
  const customerReference = `${m}-ref-1`;
  const view = await h.subscriptions.create({
    productHandle: `${m}-pro`,
    customer: {
      firstName: `${m}First`,
      lastName: `${m}Last`,
      email: customerEmail,
      reference: customerReference,
      organization: `${m} Org`,
    },
    creditCard: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
  });
  const subscriptionId = view.subscription.id;
  await h.allocations.allocate(subscriptionId, seats.component.id, { quantity: 3, memo: `${m} seats memo` });
  await h.allocations.recordUsage(subscriptionId, calls.component.id, { quantity: 5, memo: `${m} usage memo` });
  await h.metafields.setMetadata('customer', view.customer.id, [{ name: customerFieldName, value: `${m}-gold` }]);
  await h.metafields.setMetadata('subscription', subscriptionId, [{ name: subscriptionFieldName, value: `${m}-red` }]);
  const note = await h.notes.create(subscriptionId, { body: `${m} private note` });
  const lone = await h.customers.create({
    firstName: `${m}Lone`,
    lastName: `${m}Lone`,
    email: `${m}-lone@example.com`,
  });
  // Documents: the signup invoice (paid), a partial refund of it (a credit note), an open ad-hoc invoice.
  const signupInvoice = (await h.invoices.list({ subscriptionId })).invoices.find((i) => i.role === 'signup');
  if (signupInvoice === undefined) throw new Error(`${site}: the seeded signup issued no invoice`);
  const { creditNote } = await h.invoices.refund(signupInvoice.uid, { amountInCents: 100, memo: `${m} refund memo` });
  // Before the open invoice, so that the prepayment pays nothing of it (the invoice stays unpaid).
  const prepayment = await h.accounts.createPrepayment(subscriptionId, {
    amount: '20.00',
    memo: `${m} prepayment memo`,
    details: `${m} check 7`,
    method: 'check',
  });
  const openInvoice = await h.invoices.createAdhoc(subscriptionId, {
    lineItems: [{ title: `${m} consulting`, description: `${m} ad hoc line`, quantity: '2', unitPriceInCents: 2500 }],
    memo: `${m} ad hoc memo`,
  });
  const [statement] = await h.invoices.statements(subscriptionId);
  if (statement === undefined) throw new Error(`${site}: the seeded subscription has no statement`);
  // The records of the price point, reason code, subcode, prepayment, payment profile and export routes.
  const pricePoint = await h.pricePoints.createProductPricePoint(product.product.id, {
    name: `${m} Annual`,
    handle: `${m}-annual`,
    priceInCents: 9000,
    interval: 12,
    intervalUnit: 'month',
  });
  const reasonCode = await h.reasonCodes.create({ code: `${m}-rc`, description: `${m} reason` });
  const couponSubcode = `${m.toUpperCase()}SUB1`;
  await h.coupons.createSubcodes(coupon.id, [couponSubcode]);
  const offer = await h.offers.create({
    name: `${m} offer`,
    handle: `${m}-offer`,
    description: `${m} offer text`,
    productId: product.product.id,
    components: [{ componentId: seats.component.id, startingQuantity: 2 }],
    coupons: [couponCode],
  });
  const otherProfile = await h.paymentProfiles.create({
    customerId: view.customer.id,
    fullNumber: '4222222222222',
    expirationMonth: 11,
    expirationYear: 2031,
    firstName: `${m}Card`,
    lastName: `${m}Holder`,
  });
  const subscriptionsExport = await h.exports.exportSubscriptions();
  const invoicesExport = await h.exports.exportInvoices();
  const [webhook] = await h.webhooks.list({});
  if (webhook === undefined) throw new Error(`${site}: seeding made no webhook`);
  // A recorded direct-post call: a signed signup for a product that does not exist (a failure is a call too).
  const secure = buildSecureFields({
    apiId: created.direct.apiId,
    apiSecret: created.direct.apiSecret,
    data: { signup: { product: { handle: `${m}-missing` } } },
    now: f.clock.now(),
  });
  const form = new URLSearchParams(Object.entries(secure.fields)).toString();
  const call = await f.engine.direct.signup(parseDirectForm(form), { contentType: 'form' });
  const info = await h.info();
  const portal = createPortalLink({ customerId: view.customer.id, sharedKey: info.sharedKey, now: f.clock.now() });
  if (view.paymentProfile === null || view.subscription.signupPaymentId === null) {
    throw new Error(`${site}: the seeded subscription has no card or signup payment`);
  }
  const referralCode = view.subscription.referralCode ?? '';
  return {
    site,
    siteId: created.site.id,
    marker: m,
    apiKey: created.apiKey,
    sharedKey: info.sharedKey,
    direct: created.direct,
    familyId: family.id,
    familyHandle: family.handle,
    productId: product.product.id,
    productHandle: product.product.handle,
    otherProductId: other.product.id,
    otherProductHandle: other.product.handle,
    seatsId: seats.component.id,
    seatsHandle: `${m}-seats`,
    callsId: calls.component.id,
    supportId: support.component.id,
    couponId: coupon.id,
    couponCode,
    customerFieldName,
    subscriptionFieldName,
    customerId: view.customer.id,
    customerEmail,
    customerReference,
    loneCustomerId: lone.id,
    subscriptionId,
    paymentProfileId: view.paymentProfile.id,
    otherPaymentProfileId: otherProfile.id,
    pricePointId: pricePoint.pricePoint.id,
    reasonCodeId: reasonCode.id,
    reasonCode: reasonCode.code,
    couponSubcode,
    offerId: offer.offer.id,
    offerHandle: offer.offer.handle,
    prepaymentId: prepayment.entry.id,
    subscriptionsExportId: subscriptionsExport.id,
    invoicesExportId: invoicesExport.id,
    signupPaymentId: view.subscription.signupPaymentId,
    referralCode,
    noteId: note.id,
    endpointId: endpoint.id,
    endpointUrl,
    webhookId: webhook.id,
    callId: call.call.id,
    invoiceUid: signupInvoice.uid,
    openInvoiceUid: openInvoice.uid,
    creditNoteUid: creditNote.uid,
    statementId: statement.id,
    cardUpdatePath: `/update_payment/${subscriptionId}/${hostedPageToken('update_payment', subscriptionId, info.sharedKey)}`,
    portalPath: portal.path,
    secrets: [
      created.apiKey,
      info.sharedKey,
      created.direct.apiId,
      created.direct.apiSecret,
      created.direct.apiPassword,
      call.call.id,
      signupInvoice.uid,
      openInvoice.uid,
      creditNote.uid,
      ...(referralCode === '' ? [] : [referralCode]),
    ],
  };
}

/**
 * Default path values per parameter: `:id` means what the path's first segment names
 * (`/subscriptions/:id` a subscription, `/product_families/:id` a family...), `:cid` a component,
 * `:fid` a family, `:note_id` a note, `:handle` a product handle, `:uid` the invoice or credit
 * note a `/invoices/` or `/credit_notes/` path names (its PDF, `{uid}.pdf`, where the pattern has no
 * `.json`), `:file` the signup invoice's PDF under a portal link, and the hosted pages' own
 * parameters. Throws for a path whose `:id` names something it does not know, so a new resource's
 * route cannot be filled with a meaningless id.
 */
export function pathValues(w: SiteWorld, plain: string, overrides: Readonly<Record<string, string>> = {}) {
  const first = plain.split('/')[1] ?? '';
  const idBySegment: Record<string, number | string> = {
    subscriptions: w.subscriptionId,
    customers: w.customerId,
    product_families: w.familyId,
    products: w.productId,
    coupons: w.couponId,
    components: w.seatsId,
    endpoints: w.endpointId,
    payment_profiles: w.paymentProfileId,
    calls: w.callId,
    update_payment: w.subscriptionId,
    statements: w.statementId,
    reason_codes: w.reasonCodeId,
    offers: w.offerId,
  };
  const documentUid = first === 'credit_notes' ? w.creditNoteUid : w.invoiceUid;
  // `/invoices/:uid` and `/credit_notes/:uid` without `.json` are the documents' PDFs (`{uid}.pdf`).
  const uid = /^\/(invoices|credit_notes)\/:uid$/.test(plain) ? `${documentUid}.pdf` : documentUid;
  const [, , customerId, expires, signature] = w.portalPath.split('/');
  const portalCustomer = plain.startsWith('/portal/customers/') ? { id: String(w.customerId) } : {};
  const api = plain.startsWith('/api/v2/')
    ? { id: String(plain.includes('/calls/') ? w.callId : w.subscriptionId) }
    : {};
  const id = idBySegment[first];
  const values: Record<string, string> = {
    ...(id === undefined ? {} : { id: String(id) }),
    cid: String(w.seatsId),
    fid: String(w.familyId),
    note_id: String(w.noteId),
    payment_profile_id: String(w.otherPaymentProfileId),
    price_point_id: String(w.pricePointId),
    subcode: w.couponSubcode,
    prepayment_id: String(w.prepaymentId),
    batch_id: String(plain.startsWith('/api_exports/invoices/') ? w.invoicesExportId : w.subscriptionsExportId),
    handle: w.productHandle,
    token: w.cardUpdatePath.split('/')[3] ?? '',
    customerId: customerId ?? '',
    expires: expires ?? '',
    signature: signature ?? '',
    action: 'cancel',
    uid,
    file: `${w.invoiceUid}.pdf`,
    ...portalCustomer,
    ...api,
    ...overrides,
  };
  return values;
}
