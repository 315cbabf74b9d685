import { z } from 'zod';
import { parseMajorAmount } from '../domain/money/parse-amount.js';
import { BillingError, ValidationCollector, validationError } from '../errors.js';
import type {
  AdhocInvoiceInput,
  InvoiceListQuery,
  InvoicePaymentInput,
  InvoiceRefundInput,
  InvoiceStatus,
  MultiInvoicePaymentInput,
} from '../invoices/model.js';
import { DEFAULT_PER_PAGE, type ListPage, MAX_PER_PAGE } from './list-query.js';
import { isGiven } from './subscription-request.js';
import { defineWireRequest, isPlainObject, parseWireParams, parseWireRequest } from './wire-request.js';
import { wireBoolean, wireDecimal, wireId, wireInteger, wireText } from './wire-scalars.js';

/**
 * Request bodies and list queries of the invoice endpoints, in the hosted service's shapes (the
 * official SDK's `CreateInvoicePaymentRequest`, `RefundInvoiceRequest`, `VoidInvoiceRequest`,
 * `CreateInvoiceRequest` and `listInvoices` parameters). Amounts arrive in major units (`"10.00"`
 * or `10`) and are read into minor units of the site's currency with the engine's own amount
 * parser, so a bad amount gets the one published message ("Amount: is not a number."). Fields the
 * engine cannot honour (a prepayment, coupons on an ad-hoc invoice, a tax code) are refused rather
 * than dropped: dropping them would bill something other than what the client asked for.
 */

const UNSUPPORTED = 'is not supported by this server yet.';

// A field the engine cannot honour: refused when given, so it is reported beside other problems.
const unsupportedField = z
  .unknown()
  .optional()
  .refine((v) => !isGiven(v), { message: UNSUPPORTED });

// A flag the engine cannot honour when set: `false` (or absent) asks for the behaviour it has.
const unsupportedWhenTrue = wireBoolean.nullish().refine((v) => v !== true, { message: UNSUPPORTED });

function amountInCents(value: unknown, currency: string, errors: ValidationCollector, attribute: string) {
  // `{"amount": null}` and a missing amount alike get the parser's "Amount: is not a number.".
  return errors.capture(() => parseMajorAmount(value ?? undefined, currency, { attribute }));
}

const paymentFields = z.object(
  {
    amount: wireDecimal.nullish(),
    memo: wireText.nullish(),
    method: wireText.nullish(),
    details: wireText.nullish(),
    payment_profile_id: unsupportedField,
    received_on: wireText.nullish(),
  },
  { error: 'must be an object.' },
);

/** `POST /invoices/{uid}/payments.json`: body `{"payment":{amount, memo, method, ...}, "type": ...}`. */
export const invoicePaymentRequest = defineWireRequest('payment', paymentFields);

const paymentTopLevel = z.object(
  {
    type: wireText.nullish().refine((v) => v == null || v === 'external' || v === 'payment', {
      message:
        "must be 'external' or 'payment'; prepayments and service credits on an invoice are not supported by this server yet.",
    }),
  },
  { error: 'must be an object.' },
);

/**
 * Reads a payment for an invoice into the engine's {@link InvoicePaymentInput}. `type` is the
 * SDK's `InvoicePaymentType`: `external` (the default) is money received outside the gateway,
 * recorded with its `method` and `details` as the memo when no memo is given; `payment` charges
 * the subscription's card. The engine records no other kind against an invoice, so the others are
 * refused here under their own name.
 */
export function readInvoicePayment(body: unknown, currency: string): InvoicePaymentInput {
  const errors = new ValidationCollector();
  const fields = errors.capture(() => parseWireRequest(invoicePaymentRequest, body));
  const top = errors.capture(() => parseWireParams(paymentTopLevel, isPlainObject(body) ? body : {}, 'body'));
  const cents = fields === undefined ? undefined : amountInCents(fields.amount, currency, errors, 'payment.amount');
  errors.throwIfAny();
  const payment = fields as z.output<typeof paymentFields>;
  const described = [payment.method, payment.details].filter((part) => part != null && part.trim() !== '');
  const memo = payment.memo ?? (described.length > 0 ? described.join(': ') : undefined);
  return {
    amountInCents: cents as number,
    method: top?.type === 'payment' ? 'payment' : 'external',
    ...(memo === undefined ? {} : { memo }),
  };
}

const multiPaymentFields = z.object(
  {
    amount: wireDecimal.nullish(),
    memo: wireText.nullish(),
    method: wireText.nullish(),
    details: wireText.nullish(),
    received_on: wireText.nullish(),
    applications: z
      .array(
        z.object({ invoice_uid: wireText.nullish(), amount: wireDecimal.nullish() }, { error: 'must be an object.' }),
        { error: 'must be a list.' },
      )
      .nullish(),
  },
  { error: 'must be an object.' },
);

/** `POST /invoices/payments.json`: body `{"payment":{amount, memo, method, details, applications:[{invoice_uid, amount}]}}`. */
export const multiInvoicePaymentRequest = defineWireRequest('payment', multiPaymentFields);

/**
 * Reads one external payment for several invoices into the engine's
 * {@link MultiInvoicePaymentInput}: amounts in major units, the memo defaulting to the method and
 * details as for a single invoice's payment. Every problem is reported at once.
 */
export function readMultiInvoicePayment(body: unknown, currency: string): MultiInvoicePaymentInput {
  const errors = new ValidationCollector();
  const fields = errors.capture(() => parseWireRequest(multiInvoicePaymentRequest, body));
  const total = fields === undefined ? undefined : amountInCents(fields.amount, currency, errors, 'payment.amount');
  const applications = (fields?.applications ?? []).map((a, i) => {
    if (a.invoice_uid == null || a.invoice_uid.trim() === '') {
      errors.add(`Applications: invoice_uid of application ${i + 1} cannot be blank.`, 'payment.applications');
    }
    const cents = amountInCents(a.amount, currency, errors, 'payment.applications');
    return { invoiceUid: a.invoice_uid ?? '', amountInCents: cents ?? 0 };
  });
  errors.throwIfAny();
  const payment = fields as z.output<typeof multiPaymentFields>;
  const described = [payment.method, payment.details].filter((part) => part != null && part.trim() !== '');
  const memo = payment.memo ?? (described.length > 0 ? described.join(': ') : undefined);
  return { amountInCents: total as number, applications, ...(memo === undefined ? {} : { memo }) };
}

const refundFields = z.object(
  {
    amount: wireDecimal.nullish(),
    memo: wireText.nullish(),
    payment_id: wireId.nullish(),
    external: unsupportedWhenTrue,
    apply_credit: unsupportedWhenTrue,
    void_invoice: unsupportedWhenTrue,
    segment_uids: unsupportedField,
  },
  { error: 'must be an object.' },
);

/** `POST /invoices/{uid}/refunds.json`: body `{"refund":{amount, memo, payment_id}}`. */
export const invoiceRefundRequest = defineWireRequest('refund', refundFields);

/**
 * Reads a refund of an invoice's payment into the engine's {@link InvoiceRefundInput}: `amount` in
 * major units, a `memo` (required, as the SDK's model has it) and the `payment_id` to refund
 * (default: the invoice's latest payment).
 */
export function readInvoiceRefund(body: unknown, currency: string): InvoiceRefundInput {
  const errors = new ValidationCollector();
  const fields = errors.capture(() => parseWireRequest(invoiceRefundRequest, body));
  const cents = fields === undefined ? undefined : amountInCents(fields.amount, currency, errors, 'refund.amount');
  if (fields !== undefined && (fields.memo == null || fields.memo.trim() === '')) {
    errors.add('Memo: cannot be blank.', 'refund.memo');
  }
  errors.throwIfAny();
  const refund = fields as z.output<typeof refundFields>;
  return {
    amountInCents: cents as number,
    memo: refund.memo as string,
    ...(refund.payment_id == null ? {} : { paymentTransactionId: refund.payment_id }),
  };
}

const voidFields = z
  .object({ reason: wireText.nullish() }, { error: 'must be an object.' })
  .superRefine((v, ctx) => {
    if (v.reason == null || v.reason.trim() === '') {
      ctx.addIssue({ code: 'custom', path: ['reason'], message: 'cannot be blank.' });
    }
  })
  .transform((v) => ({ reason: (v.reason as string).trim() }));

/** `POST /invoices/{uid}/void.json`: body `{"void":{"reason":"..."}}`; the reason is required. */
export const invoiceVoidRequest = defineWireRequest('void', voidFields);

// Fields of an ad-hoc invoice and of its lines that the engine cannot honour. They are read as
// anything and refused after parsing, so that they are reported beside every other problem.
const UNSUPPORTED_ADHOC_FIELDS = [
  'issue_date',
  'payment_instructions',
  'seller_address',
  'billing_address',
  'shipping_address',
  'coupons',
] as const;
const UNSUPPORTED_LINE_FIELDS = [
  'tax_code',
  'period_range_start',
  'period_range_end',
  'product_id',
  'component_id',
  'price_point_id',
  'product_price_point_id',
] as const;

const anything = z.unknown().optional();

const adhocLineFields = z.object(
  {
    title: wireText.nullish(),
    description: wireText.nullish(),
    quantity: wireDecimal.nullish(),
    unit_price: wireDecimal.nullish(),
    taxable: wireBoolean.nullish(),
    ...Object.fromEntries(UNSUPPORTED_LINE_FIELDS.map((key) => [key, anything])),
  },
  { error: 'must be an object.' },
);

const adhocFields = z.object(
  {
    line_items: z.array(adhocLineFields, { error: 'must be a list.' }).nullish(),
    memo: wireText.nullish(),
    net_terms: wireInteger.nullish(),
    status: wireText.nullish(),
    ...Object.fromEntries(UNSUPPORTED_ADHOC_FIELDS.map((key) => [key, anything])),
  },
  { error: 'must be an object.' },
);

function humanize(key: string): string {
  const words = key.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Records every field of `object` that the engine cannot honour and that was given. */
function refuseUnsupported(
  object: Readonly<Record<string, unknown>>,
  keys: readonly string[],
  at: string,
  errors: ValidationCollector,
): void {
  for (const key of keys) {
    if (isGiven(object[key])) errors.add(`${humanize(key)}: ${UNSUPPORTED}`, `${at}.${key}`);
  }
}

/** `POST /subscriptions/{id}/invoices.json`: body `{"invoice":{line_items:[...], memo, net_terms, status}}`. */
export const adhocInvoiceRequest = defineWireRequest('invoice', adhocFields);

// A quantity as the service shows it: a positive decimal written without exponent or sign.
const QUANTITY = /^\d+(\.\d+)?$/;

/**
 * Reads an ad-hoc invoice into the engine's {@link AdhocInvoiceInput}: at least one line, each
 * with a title, a positive `quantity` (default 1) and a `unit_price` in major units; `net_terms`
 * is a whole number of days, 0 or more. Every problem of every line is reported at once, each
 * under its line (`invoice.line_items.0.unit_price`).
 */
export function readAdhocInvoice(body: unknown, currency: string): AdhocInvoiceInput {
  const errors = new ValidationCollector();
  const fields = errors.capture(() => parseWireRequest(adhocInvoiceRequest, body));
  if (fields === undefined) errors.throwIfAny();
  const invoice = fields as z.output<typeof adhocFields>;
  refuseUnsupported(invoice, UNSUPPORTED_ADHOC_FIELDS, 'invoice', errors);
  if (invoice.status != null && invoice.status !== 'open' && invoice.status !== 'draft') {
    errors.add("Status: must be 'open' or 'draft'.", 'invoice.status');
  }
  const lines = invoice.line_items ?? [];
  if (lines.length === 0) errors.add('Line items: must have at least one line.', 'invoice.line_items');
  const lineItems: AdhocInvoiceInput['lineItems'][number][] = [];
  lines.forEach((line, index) => {
    const at = `invoice.line_items.${index}`;
    refuseUnsupported(line, UNSUPPORTED_LINE_FIELDS, at, errors);
    if (line.taxable === true) errors.add(`Taxable: ${UNSUPPORTED}`, `${at}.taxable`);
    if (line.title == null || line.title.trim() === '') errors.add('Title: cannot be blank.', `${at}.title`);
    const quantity = line.quantity == null ? '1' : String(line.quantity).trim();
    if (!QUANTITY.test(quantity) || Number(quantity) <= 0) {
      errors.add('Quantity: must be a number greater than 0.', `${at}.quantity`);
    }
    const unitPrice = amountInCents(line.unit_price, currency, errors, `${at}.unit_price`);
    if (line.title != null && unitPrice !== undefined) {
      lineItems.push({
        title: line.title.trim(),
        quantity,
        unitPriceInCents: unitPrice,
        ...(line.description == null ? {} : { description: line.description }),
      });
    }
  });
  if (invoice.net_terms != null && invoice.net_terms < 0) {
    errors.add('Net terms: must be greater than or equal to 0.', 'invoice.net_terms');
  }
  errors.throwIfAny();
  return {
    lineItems,
    ...(invoice.memo == null ? {} : { memo: invoice.memo }),
    ...(invoice.net_terms == null ? {} : { netTerms: invoice.net_terms }),
    ...(invoice.status === 'draft' ? { status: 'draft' as const } : {}),
  };
}

// ---- list queries -------------------------------------------------------------------------------

// Paging values are read leniently, as on every list: the service clamps rather than rejects.
function lenientInteger(fallback: number, min: number, max: number) {
  return z
    .unknown()
    .optional()
    .transform((v) => {
      const n = typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : typeof v === 'number' ? v : Number.NaN;
      return Number.isSafeInteger(n) && n >= min ? Math.min(n, max) : fallback;
    });
}

// A query value given as text; an empty pair (`status=`, which the SDK sends for unset options) is not given.
const queryText = z
  .unknown()
  .optional()
  .transform((v) => {
    const text = Array.isArray(v) && v.length === 1 ? v[0] : v;
    return typeof text === 'string' && text.trim() !== '' ? text.trim() : undefined;
  });

const INVOICE_STATUSES: readonly InvoiceStatus[] = ['draft', 'open', 'paid', 'voided', 'canceled'];
const DATE_FIELDS = ['issue_date', 'due_date', 'paid_date', 'created_at', 'updated_at'] as const;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

function isCalendarDate(text: string): boolean {
  if (!DATE.test(text)) return false;
  const parsed = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().startsWith(text);
}

const listFields = z
  .object({
    status: queryText,
    subscription_id: queryText,
    customer_ids: z.unknown().optional(),
    number: z.unknown().optional(),
    start_date: queryText,
    end_date: queryText,
    date_field: queryText,
    page: lenientInteger(1, 1, Number.MAX_SAFE_INTEGER),
    per_page: lenientInteger(DEFAULT_PER_PAGE, 1, MAX_PER_PAGE),
    direction: queryText,
  })
  .superRefine((q, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (q.status !== undefined && !INVOICE_STATUSES.includes(q.status as InvoiceStatus)) {
      issue('status', `must be one of ${INVOICE_STATUSES.join(', ')}.`);
    }
    if (q.subscription_id !== undefined && !/^\d{1,15}$/.test(q.subscription_id)) {
      issue('subscription_id', 'must be a positive whole number.');
    }
    for (const key of ['start_date', 'end_date'] as const) {
      const value = q[key];
      if (value !== undefined && !isCalendarDate(value)) issue(key, 'must be a date (YYYY-MM-DD).');
    }
    if (q.date_field !== undefined && !(DATE_FIELDS as readonly string[]).includes(q.date_field)) {
      issue('date_field', `must be one of ${DATE_FIELDS.join(', ')}.`);
    }
    if (q.direction !== undefined && !['asc', 'desc'].includes(q.direction.toLowerCase())) {
      issue('direction', "must be 'asc' or 'desc'.");
    }
    if (numbersOf(q.number).length > 1) issue('number', 'only one number at a time is supported by this server yet.');
    if (numbersOf(q.customer_ids).length > 1) {
      issue('customer_ids', 'only one customer at a time is supported by this server yet.');
    } else if (numbersOf(q.customer_ids).some((id) => !/^\d{1,15}$/.test(id))) {
      issue('customer_ids', 'must be positive whole numbers.');
    }
  })
  .transform((q): InvoiceListQuery & ListPage => {
    const number = numbersOf(q.number)[0];
    const customer = numbersOf(q.customer_ids)[0];
    return {
      page: q.page,
      perPage: q.per_page,
      ...(q.status === undefined ? {} : { status: q.status as InvoiceStatus }),
      ...(q.subscription_id === undefined ? {} : { subscriptionId: Number(q.subscription_id) }),
      ...(customer === undefined ? {} : { customerId: Number(customer) }),
      ...(number === undefined ? {} : { number }),
      ...(q.start_date === undefined ? {} : { startDate: q.start_date }),
      ...(q.end_date === undefined ? {} : { endDate: q.end_date }),
      ...(q.date_field === undefined ? {} : { dateField: q.date_field as NonNullable<InvoiceListQuery['dateField']> }),
      ...(q.direction === undefined ? {} : { direction: q.direction.toLowerCase() as 'asc' | 'desc' }),
    };
  });

/** A list parameter as its values: `number=INV-1`, `number=INV-1,INV-2` or `number[]=INV-1`. */
function numbersOf(value: unknown): string[] {
  const list = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [];
  return list.filter((v): v is string => typeof v === 'string' && v.trim() !== '').map((v) => v.trim());
}

/**
 * Reads `GET /invoices.json`'s query (the SDK's `listInvoices` parameters): `status`,
 * `subscription_id`, `customer_ids` (one), `number` (one), `start_date`/`end_date` (`YYYY-MM-DD`,
 * against `date_field`, default `issue_date`), `page`, `per_page` and `direction`. Paging is
 * lenient as on every list; a filter that cannot match as written is a 422 rather than an empty
 * page, so a typo is not mistaken for "no invoices". The SDK's include flags (`line_items=true`,
 * ...) are ignored: every invoice is written in full.
 */
export function readInvoiceListQuery(query: unknown): InvoiceListQuery & ListPage {
  return parseWireParams(listFields, query, 'query');
}

const creditNoteListFields = z
  .object({
    subscription_id: queryText,
    page: lenientInteger(1, 1, Number.MAX_SAFE_INTEGER),
    per_page: lenientInteger(DEFAULT_PER_PAGE, 1, MAX_PER_PAGE),
    direction: queryText,
  })
  .superRefine((q, ctx) => {
    if (q.subscription_id !== undefined && !/^\d{1,15}$/.test(q.subscription_id)) {
      ctx.addIssue({ code: 'custom', path: ['subscription_id'], message: 'must be a positive whole number.' });
    }
    if (q.direction !== undefined && !['asc', 'desc'].includes(q.direction.toLowerCase())) {
      ctx.addIssue({ code: 'custom', path: ['direction'], message: "must be 'asc' or 'desc'." });
    }
  })
  .transform((q) => ({
    page: q.page,
    perPage: q.per_page,
    ...(q.subscription_id === undefined ? {} : { subscriptionId: Number(q.subscription_id) }),
    ...(q.direction === undefined ? {} : { direction: q.direction.toLowerCase() as 'asc' | 'desc' }),
  }));

/** Reads `GET /credit_notes.json`'s query: `subscription_id`, `page`, `per_page`, `direction`. */
export function readCreditNoteListQuery(query: unknown): z.output<typeof creditNoteListFields> {
  return parseWireParams(creditNoteListFields, query, 'query');
}

const eventListFields = z
  .object({
    invoice_uid: queryText,
    page: lenientInteger(1, 1, Number.MAX_SAFE_INTEGER),
    per_page: lenientInteger(100, 1, MAX_PER_PAGE),
  })
  .transform((q) => ({
    page: q.page,
    perPage: q.per_page,
    ...(q.invoice_uid === undefined ? {} : { invoiceUid: q.invoice_uid }),
  }));

/**
 * Reads `GET /invoices/events.json`'s query (the SDK's `listInvoiceEvents`): `invoice_uid`,
 * `page` and `per_page` (default 100, as the service's). The other filters (`since_id`,
 * `since_date`, `event_types`) are not read.
 */
export function readInvoiceEventQuery(query: unknown): z.output<typeof eventListFields> {
  return parseWireParams(eventListFields, query, 'query');
}

/** Raises the validation error the SDK's `createInvoice` expects, `{"errors":{...}}` keyed by attribute. */
export function asInvoiceErrorMap(error: unknown): unknown {
  if (!(error instanceof BillingError) || error.code !== 'validation') return error;
  return validationError(error.details, 'map');
}
