/**
 * What the OpenAPI document knows about a route beyond its method and path: a name, a group, the
 * request body (from the wire layer's own zod schemas, so the document reads bodies as the server
 * does) and the success response. Keys are `METHOD /path` in OpenAPI spelling
 * (`GET /subscriptions/{id}.json`). A route served by the app with no entry here is still
 * documented, generically (see openapi-document.ts); an entry for a route the app does not serve is
 * never used.
 */
import { z } from 'zod';
import {
  adjustmentRequest,
  allocationFields,
  allocationRequest,
  cancelSubscriptionRequest,
  chargeRequest,
  componentCreateRequest,
  componentUpdateRequest,
  couponRequest,
  createSubscriptionRequest,
  creditRequest,
  customerRequest,
  delayedCancelRequest,
  endpointRequest,
  endpointUpdateRequest,
  holdRequest,
  metadataFields,
  metafieldFields,
  metafieldUpdateFields,
  migrationRequest,
  noteRequest,
  paymentProfileRequest,
  paymentRequest,
  productFamilyRequest,
  productFamilyUpdateRequest,
  productRequest,
  reactivateParams,
  refundRequest,
  updateSubscriptionRequest,
  usageRequest,
} from '../wire-bridge.js';
import {
  componentSchema,
  couponSchema,
  customerSchema,
  endpointSchema,
  productFamilySchema,
  productSchema,
  subscriptionSchema,
  transactionSchema,
  webhookSchema,
  wrapped,
} from './response-schemas.js';

/** The success answer of an operation. */
export interface SuccessResponse {
  readonly status: number;
  readonly description: string;
  /** The JSON body; omitted for a body the document does not describe field by field. */
  readonly schema?: z.ZodType;
  /** Default `application/json`. */
  readonly contentType?: string;
}

/** The known facts of one operation. */
export interface OperationInfo {
  readonly summary: string;
  /** The group the reference page lists it under. */
  readonly tag: string;
  readonly description?: string;
  /** The whole request body, wrapper key included. */
  readonly requestBody?: z.ZodType;
  /** Whether the body may be left out (an optional wrapper such as a cancellation's). */
  readonly bodyOptional?: boolean;
  /** The media types the body may come as; default JSON only. */
  readonly bodyTypes?: readonly string[];
  readonly success?: SuccessResponse;
}

/** The body of a wire request: its wrapper key around its fields (`{"customer":{...}}`). */
function body(request: { readonly wrapper: string; readonly fields: z.ZodType }): z.ZodType {
  return z.object({ [request.wrapper]: request.fields });
}

/** A wrapper holding one object or a list of them, as the metafield routes read it. */
function oneOrMany(wrapper: string, fields: z.ZodType): z.ZodType {
  return z.object({ [wrapper]: z.union([fields, z.array(fields)]) });
}

const one = (status: number, description: string, schema: z.ZodType): SuccessResponse => ({
  status,
  description,
  schema,
});
const list = (description: string, schema: z.ZodType): SuccessResponse => ({
  status: 200,
  description,
  schema: z.array(schema),
});
const emptyObject: SuccessResponse = { status: 200, description: 'Done; the body is `{}`.', schema: z.object({}) };

const subscription = wrapped('subscription', subscriptionSchema);
const customer = wrapped('customer', customerSchema);
const product = wrapped('product', productSchema);
const family = wrapped('product_family', productFamilySchema);
const component = wrapped('component', componentSchema);
const coupon = wrapped('coupon', couponSchema);
const transaction = wrapped('transaction', transactionSchema);
const endpoint = wrapped('endpoint', endpointSchema);
const webhook = wrapped('webhook', webhookSchema);
const message = z.object({ message: z.string() });

const FORM = 'application/x-www-form-urlencoded';

const DIRECT_SIGNUP: OperationInfo = {
  summary: 'Direct post signup',
  tag: 'Direct post',
  description:
    'A signup from a browser form signed with the secure fields (or JSON with the api_id as Basic user); a form with a redirect URI answers with a 303 there.',
  requestBody: z.record(z.string(), z.unknown()),
  bodyTypes: [FORM, 'application/json'],
  success: { status: 200, description: 'The call record, when there is no redirect.' },
};

const HTML: Pick<SuccessResponse, 'contentType' | 'schema'> = { contentType: 'text/html', schema: z.string() };

/** The operations the document describes in full. */
export const KNOWN_OPERATIONS: Readonly<Record<string, OperationInfo>> = {
  // Public pages.
  'GET /': {
    summary: 'How to call the API',
    tag: 'Service',
    success: { status: 200, description: 'Usage notes and a curl line.' },
  },
  'GET /openapi.json': {
    summary: 'This OpenAPI document',
    tag: 'Service',
    success: { status: 200, description: 'The OpenAPI 3.1 document of every route.' },
  },
  'GET /docs': {
    summary: 'The API reference page',
    tag: 'Service',
    success: { status: 200, description: 'An HTML page rendering this document.', ...HTML },
  },
  'GET /update_payment/{id}/{token}': {
    summary: 'Card update page',
    tag: 'Hosted pages',
    success: { status: 200, description: 'The hosted card update form.', ...HTML },
  },
  'POST /update_payment/{id}/{token}': {
    summary: 'Submit the card update page',
    tag: 'Hosted pages',
    requestBody: z.record(z.string(), z.string()),
    bodyTypes: [FORM],
    success: { status: 200, description: 'The page again, with the outcome.', ...HTML },
  },
  'GET /portal/{customerId}/{expires}/{signature}': {
    summary: 'Billing portal',
    tag: 'Hosted pages',
    success: { status: 200, description: "The customer's billing portal.", ...HTML },
  },
  'POST /portal/{customerId}/{expires}/{signature}/{action}': {
    summary: 'Billing portal action',
    tag: 'Hosted pages',
    description: 'A form post of the portal (change the card, cancel, reactivate...), as the site allows.',
    requestBody: z.record(z.string(), z.string()),
    bodyTypes: [FORM],
    success: { status: 303, description: 'Back to the portal, with a message.', ...HTML },
  },

  // Direct post: authenticated by the form's signature, not by the API key.
  'POST /api/v2/signups': DIRECT_SIGNUP,
  'POST /api/v2/signups.json': DIRECT_SIGNUP,
  'POST /api/v2/subscriptions/{id}/card_update': {
    summary: 'Direct post card update',
    tag: 'Direct post',
    description: 'An HTML form post signed with the secure fields; answers with a 303 to the redirect URI.',
    requestBody: z.record(z.string(), z.string()),
    bodyTypes: [FORM],
    success: { status: 303, description: 'To the secure redirect URI, with the call id and signature.' },
  },
  'GET /api/v2/calls/{id}': {
    summary: 'Read a direct-post call',
    tag: 'Direct post',
    description: 'HTTP Basic with the api_id as user and the direct-post password.',
    success: { status: 200, description: 'The call: its request and response.' },
  },

  // Catalog.
  'POST /product_families.json': {
    summary: 'Create a product family',
    tag: 'Product families',
    requestBody: body(productFamilyRequest),
    success: one(201, 'The new family.', family),
  },
  'GET /product_families.json': {
    summary: 'List product families',
    tag: 'Product families',
    success: list('The families.', family),
  },
  'GET /product_families/{id}.json': {
    summary: 'Read a product family',
    tag: 'Product families',
    success: one(200, 'The family.', family),
  },
  'PUT /product_families/{id}.json': {
    summary: 'Update a product family',
    tag: 'Product families',
    requestBody: body(productFamilyUpdateRequest),
    success: one(200, 'The family as updated.', family),
  },
  'POST /product_families/{id}/products.json': {
    summary: 'Create a product',
    tag: 'Products',
    requestBody: body(productRequest),
    success: one(201, 'The new product.', product),
  },
  'GET /product_families/{id}/products.json': {
    summary: "List a family's products",
    tag: 'Products',
    success: list('The products.', product),
  },
  'GET /products/{id}.json': { summary: 'Read a product', tag: 'Products', success: one(200, 'The product.', product) },
  'GET /products/handle/{handle}.json': {
    summary: 'Read a product by handle',
    tag: 'Products',
    success: one(200, 'The product.', product),
  },
  'PUT /products/{id}.json': {
    summary: 'Update a product',
    tag: 'Products',
    description: 'Price changes make a new product version; subscribers keep the version they signed up on.',
    requestBody: body(productRequest),
    success: one(200, 'The product as updated.', product),
  },
  'DELETE /products/{id}.json': {
    summary: 'Archive a product',
    tag: 'Products',
    success: one(200, 'The archived product.', product),
  },
  'POST /product_families/{id}/quantity_based_components.json': {
    summary: 'Create a quantity-based component',
    tag: 'Components',
    requestBody: body(componentCreateRequest('quantity_based_component')),
    success: one(201, 'The new component.', component),
  },
  'POST /product_families/{id}/on_off_components.json': {
    summary: 'Create an on/off component',
    tag: 'Components',
    requestBody: body(componentCreateRequest('on_off_component')),
    success: one(201, 'The new component.', component),
  },
  'POST /product_families/{id}/metered_components.json': {
    summary: 'Create a metered component',
    tag: 'Components',
    requestBody: body(componentCreateRequest('metered_component')),
    success: one(201, 'The new component.', component),
  },
  'GET /product_families/{id}/components.json': {
    summary: "List a family's components",
    tag: 'Components',
    success: list('The components.', component),
  },
  'GET /components/{id}.json': {
    summary: 'Read a component',
    tag: 'Components',
    success: one(200, 'The component.', component),
  },
  'GET /product_families/{fid}/components/{id}.json': {
    summary: 'Read a component of a family',
    tag: 'Components',
    success: one(200, 'The component.', component),
  },
  'PUT /product_families/{fid}/components/{id}.json': {
    summary: 'Update a component',
    tag: 'Components',
    requestBody: body(componentUpdateRequest),
    success: one(200, 'The component as updated.', component),
  },
  'DELETE /product_families/{fid}/components/{id}.json': {
    summary: 'Archive a component',
    tag: 'Components',
    success: one(200, 'The archived component.', component),
  },
  'POST /product_families/{id}/coupons.json': {
    summary: 'Create a coupon in a family',
    tag: 'Coupons',
    requestBody: body(couponRequest),
    success: one(201, 'The new coupon.', coupon),
  },
  'POST /coupons.json': {
    summary: 'Create a coupon',
    tag: 'Coupons',
    requestBody: body(couponRequest),
    success: one(201, 'The new coupon.', coupon),
  },
  'GET /coupons.json': { summary: 'List coupons', tag: 'Coupons', success: list('The coupons.', coupon) },
  'GET /coupons/find.json': {
    summary: 'Find a coupon by code',
    tag: 'Coupons',
    success: one(200, 'The coupon.', coupon),
  },
  'GET /coupons/validate.json': {
    summary: 'Validate a coupon code',
    tag: 'Coupons',
    success: one(200, 'The coupon, when it can be used.', coupon),
  },
  'GET /coupons/{id}.json': { summary: 'Read a coupon', tag: 'Coupons', success: one(200, 'The coupon.', coupon) },
  'PUT /coupons/{id}.json': {
    summary: 'Update a coupon',
    tag: 'Coupons',
    requestBody: body(couponRequest),
    success: one(200, 'The coupon as updated.', coupon),
  },
  'DELETE /coupons/{id}.json': {
    summary: 'Archive a coupon',
    tag: 'Coupons',
    success: one(200, 'The archived coupon.', coupon),
  },

  // Customers.
  'POST /customers.json': {
    summary: 'Create a customer',
    tag: 'Customers',
    requestBody: body(customerRequest),
    success: one(201, 'The new customer.', customer),
  },
  'GET /customers.json': { summary: 'List customers', tag: 'Customers', success: list('The customers.', customer) },
  'GET /customers/{id}.json': {
    summary: 'Read a customer',
    tag: 'Customers',
    success: one(200, 'The customer.', customer),
  },
  'PUT /customers/{id}.json': {
    summary: 'Update a customer',
    tag: 'Customers',
    requestBody: body(customerRequest),
    success: one(200, 'The customer as updated.', customer),
  },
  'DELETE /customers/{id}.json': { summary: 'Delete a customer', tag: 'Customers', success: emptyObject },

  // Subscriptions.
  'POST /subscriptions.json': {
    summary: 'Create a subscription',
    tag: 'Subscriptions',
    description: 'Signs a customer up to a product, with an optional card, coupons and components.',
    requestBody: body(createSubscriptionRequest),
    success: one(201, 'The new subscription.', subscription),
  },
  'POST /subscriptions/preview.json': {
    summary: 'Preview a signup',
    tag: 'Subscriptions',
    description:
      'Runs the signup in a transaction that is rolled back, against a gateway that charges nothing: what it would charge now and at its first renewal. Needs no customer or card.',
    requestBody: body(createSubscriptionRequest),
    success: { status: 200, description: '`{"subscription_preview":{...}}`: the current and next billing manifests.' },
  },
  'POST /subscriptions/{id}/purge.json': {
    summary: 'Purge a subscription (test sites only)',
    tag: 'Subscriptions',
    description:
      "Removes the subscription and every record it owns. `ack` must be the subscription's customer id; `cascade[]=customer` and `cascade[]=payment_profile` remove those too.",
    success: one(200, 'The subscription as it was before the purge.', subscription),
  },
  'GET /subscriptions.json': {
    summary: 'List subscriptions',
    tag: 'Subscriptions',
    success: list('The subscriptions.', subscription),
  },
  'GET /subscriptions/{id}.json': {
    summary: 'Read a subscription',
    tag: 'Subscriptions',
    success: one(200, 'The subscription.', subscription),
  },
  'PUT /subscriptions/{id}.json': {
    summary: 'Update a subscription',
    tag: 'Subscriptions',
    description: 'Changes the card, the product or the next billing date; if any change is refused, none is kept.',
    requestBody: body(updateSubscriptionRequest),
    success: one(200, 'The subscription as updated.', subscription),
  },
  'POST /subscriptions/{id}.json': {
    summary: 'Update a subscription (POST)',
    tag: 'Subscriptions',
    description: 'The same as the PUT, which the spec also allows as a POST.',
    requestBody: body(updateSubscriptionRequest),
    success: one(200, 'The subscription as updated.', subscription),
  },
  'DELETE /subscriptions/{id}.json': {
    summary: 'Cancel a subscription',
    tag: 'Subscription lifecycle',
    requestBody: body(cancelSubscriptionRequest),
    bodyOptional: true,
    success: one(200, 'The canceled subscription.', subscription),
  },
  'POST /subscriptions/{id}/delayed_cancel.json': {
    summary: 'Cancel at the end of the period',
    tag: 'Subscription lifecycle',
    requestBody: body(delayedCancelRequest),
    bodyOptional: true,
    success: one(200, 'A confirmation message.', message),
  },
  'DELETE /subscriptions/{id}/delayed_cancel.json': {
    summary: 'Undo a delayed cancellation',
    tag: 'Subscription lifecycle',
    success: one(200, 'A confirmation message.', message),
  },
  'PUT /subscriptions/{id}/reactivate.json': {
    summary: 'Reactivate a subscription',
    tag: 'Subscription lifecycle',
    description: 'The options come unwrapped, in the query or the body.',
    requestBody: reactivateParams,
    bodyOptional: true,
    success: one(200, 'The reactivated subscription.', subscription),
  },
  'POST /subscriptions/{id}/hold.json': {
    summary: 'Put a subscription on hold',
    tag: 'Subscription lifecycle',
    requestBody: body(holdRequest),
    bodyOptional: true,
    success: one(200, 'The subscription on hold.', subscription),
  },
  'POST /subscriptions/{id}/resume.json': {
    summary: 'Resume a subscription on hold',
    tag: 'Subscription lifecycle',
    success: one(200, 'The resumed subscription.', subscription),
  },
  'POST /subscriptions/{id}/migrations.json': {
    summary: 'Migrate to another product',
    tag: 'Subscription lifecycle',
    requestBody: body(migrationRequest),
    success: one(200, 'The migrated subscription.', subscription),
  },
  'POST /subscriptions/{id}/migrations/preview.json': {
    summary: 'Preview a migration',
    tag: 'Subscription lifecycle',
    requestBody: body(migrationRequest),
    success: { status: 200, description: 'What the migration would charge.' },
  },

  // Ledger.
  'POST /subscriptions/{id}/charges.json': {
    summary: 'Create a one-time charge',
    tag: 'Ledger',
    requestBody: body(chargeRequest),
    success: one(201, 'The charge.', transaction),
  },
  'POST /subscriptions/{id}/adjustments.json': {
    summary: 'Adjust the balance',
    tag: 'Ledger',
    requestBody: body(adjustmentRequest),
    success: one(201, 'The adjustment.', transaction),
  },
  'POST /subscriptions/{id}/credits.json': {
    summary: 'Credit a subscription',
    tag: 'Ledger',
    requestBody: body(creditRequest),
    success: one(201, 'The credit.', transaction),
  },
  'POST /subscriptions/{id}/payments.json': {
    summary: 'Record an external payment',
    tag: 'Ledger',
    requestBody: body(paymentRequest),
    success: one(201, 'The payment.', transaction),
  },
  'POST /subscriptions/{id}/refunds.json': {
    summary: 'Refund a payment',
    tag: 'Ledger',
    requestBody: body(refundRequest),
    success: one(201, 'The refund.', transaction),
  },
  'GET /transactions.json': {
    summary: "List the site's transactions",
    tag: 'Ledger',
    success: list('The transactions.', transaction),
  },
  'GET /subscriptions/{id}/transactions.json': {
    summary: "List a subscription's transactions",
    tag: 'Ledger',
    success: list('The transactions.', transaction),
  },

  // Notes, payment profiles, components of a subscription.
  'POST /subscriptions/{id}/notes.json': {
    summary: 'Create a note',
    tag: 'Notes',
    requestBody: body(noteRequest),
    success: { status: 201, description: 'The note.' },
  },
  'PUT /subscriptions/{id}/notes/{note_id}.json': {
    summary: 'Update a note',
    tag: 'Notes',
    requestBody: body(noteRequest),
    success: { status: 200, description: 'The note as updated.' },
  },
  'PUT /payment_profiles/{id}.json': {
    summary: 'Update a payment profile',
    tag: 'Payment profiles',
    requestBody: body(paymentProfileRequest),
    success: { status: 200, description: 'The payment profile; the card number only ever masked.' },
  },
  'POST /subscriptions/{id}/components/{cid}/allocations.json': {
    summary: 'Allocate a component',
    tag: 'Allocations',
    requestBody: body(allocationRequest),
    success: { status: 201, description: 'The allocation.' },
  },
  'POST /subscriptions/{id}/allocations.json': {
    summary: 'Allocate several components',
    tag: 'Allocations',
    requestBody: z.object({ allocations: z.array(allocationFields) }),
    success: { status: 201, description: 'The allocations.' },
  },
  'POST /subscriptions/{id}/allocations/preview.json': {
    summary: 'Preview allocations',
    tag: 'Allocations',
    requestBody: z.object({ allocations: z.array(allocationFields) }),
    success: { status: 200, description: 'What the allocations would charge.' },
  },
  'POST /subscriptions/{id}/components/{cid}/usages.json': {
    summary: 'Record metered usage',
    tag: 'Allocations',
    requestBody: body(usageRequest),
    success: { status: 201, description: 'The usage.' },
  },

  // Metafields.
  'POST /customers/metafields.json': {
    summary: 'Create customer metafields',
    tag: 'Metafields',
    requestBody: oneOrMany('metafields', metafieldFields),
    success: { status: 201, description: 'The metafields.' },
  },
  'PUT /customers/metafields.json': {
    summary: 'Update customer metafields',
    tag: 'Metafields',
    requestBody: oneOrMany('metafields', metafieldUpdateFields),
    success: { status: 200, description: 'The metafields as updated.' },
  },
  'POST /subscriptions/metafields.json': {
    summary: 'Create subscription metafields',
    tag: 'Metafields',
    requestBody: oneOrMany('metafields', metafieldFields),
    success: { status: 201, description: 'The metafields.' },
  },
  'PUT /subscriptions/metafields.json': {
    summary: 'Update subscription metafields',
    tag: 'Metafields',
    requestBody: oneOrMany('metafields', metafieldUpdateFields),
    success: { status: 200, description: 'The metafields as updated.' },
  },
  'POST /customers/{id}/metadata.json': {
    summary: 'Set customer metadata',
    tag: 'Metafields',
    requestBody: oneOrMany('metadata', metadataFields),
    success: { status: 201, description: 'The metadata.' },
  },
  'PUT /customers/{id}/metadata.json': {
    summary: 'Update customer metadata',
    tag: 'Metafields',
    requestBody: oneOrMany('metadata', metadataFields),
    success: { status: 200, description: 'The metadata.' },
  },
  'POST /subscriptions/{id}/metadata.json': {
    summary: 'Set subscription metadata',
    tag: 'Metafields',
    requestBody: oneOrMany('metadata', metadataFields),
    success: { status: 201, description: 'The metadata.' },
  },
  'PUT /subscriptions/{id}/metadata.json': {
    summary: 'Update subscription metadata',
    tag: 'Metafields',
    requestBody: oneOrMany('metadata', metadataFields),
    success: { status: 200, description: 'The metadata.' },
  },

  // Webhooks.
  'POST /endpoints.json': {
    summary: 'Create a webhook endpoint',
    tag: 'Webhooks',
    requestBody: body(endpointRequest),
    success: one(201, 'The new endpoint.', endpoint),
  },
  'GET /endpoints.json': {
    summary: 'List webhook endpoints',
    tag: 'Webhooks',
    description: 'Items are bare endpoint objects, as the official SDK reads them.',
    success: list('The endpoints.', endpointSchema),
  },
  'GET /endpoints/{id}.json': {
    summary: 'Read a webhook endpoint',
    tag: 'Webhooks',
    success: one(200, 'The endpoint.', endpoint),
  },
  'PUT /endpoints/{id}.json': {
    summary: 'Update a webhook endpoint',
    tag: 'Webhooks',
    requestBody: body(endpointUpdateRequest),
    success: one(200, 'The endpoint as updated.', endpoint),
  },
  'DELETE /endpoints/{id}.json': {
    summary: 'Delete a webhook endpoint',
    tag: 'Webhooks',
    success: one(200, 'The deleted endpoint.', endpoint),
  },
  'POST /endpoints/{id}/test.json': {
    summary: 'Send a test webhook',
    tag: 'Webhooks',
    success: one(200, 'The test webhook.', webhook),
  },
  'GET /webhooks.json': { summary: 'List webhooks', tag: 'Webhooks', success: list('The webhooks.', webhook) },
  'POST /webhooks/replay.json': {
    summary: 'Replay webhooks',
    tag: 'Webhooks',
    success: one(200, 'The replayed webhooks.', z.object({ status: z.literal('ok'), webhooks: z.array(webhook) })),
  },
  'POST /sites/clear_data.json': {
    summary: "Clear the site's data",
    tag: 'Site',
    description: 'Test sites only: removes customers, subscriptions and their records.',
    success: emptyObject,
  },
};
