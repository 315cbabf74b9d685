/**
 * Proforma invoices (the official SDK's `ProformaInvoicesController`, without subscription groups):
 * what a subscription's next renewal, or a signup, would bill, shown as an invoice and, on
 * request, kept. Nothing is billed: no ledger line, no invoice number, no payment, no event.
 *
 * The amounts come from the code that bills them, never from a second copy of the rules:
 * - a subscription's proforma invoice is its next renewal as the renewal assesses it (the billing
 *   manifest of `services/billing-manifest.ts`, which the renewal preview shows too); for a delayed
 *   signup not started yet (`awaiting_signup`), the invoice its start will issue, the start written
 *   by `writeStartForPreview` in a transaction that is always rolled back;
 * - a signup's proforma invoice is the invoice the signup itself issues, run in a transaction
 *   that is always rolled back against a gateway that approves everything without contacting
 *   anything (`services/preview.ts`, as the signup preview does), so it prices, and refuses, as
 *   the signup would; with `includeNext`, its first renewal's manifest too.
 */
import { randomBytes } from 'node:crypto';
import { localDateString } from '../domain/time/index.js';
import { BillingError, invalid, notFound, ValidationCollector } from '../errors.js';
import type { SiteRecord, Storage, StorageTransaction, SubscriptionRecord } from '../ports/storage.js';
import { nextBillingManifest } from '../services/billing-manifest.js';
import { runCommand } from '../services/command-runner.js';
import { writeStartForPreview } from '../services/delayed-signup.js';
import { previewCommand, rolledBack } from '../services/preview.js';
import { runRead } from '../services/read-runner.js';
import { loadSite, loadSubscription } from '../services/site-lookup.js';
import { previewEngine } from '../services/subscription-admin-service.js';
import type { CreateSubscriptionInput, SubscriptionDeps } from '../services/subscription-service.js';
import { collectionMethodOf, customerSnapshotOf, sellerOf } from './issuing.js';
import type { InvoiceRecord } from './model.js';
import type {
  ProformaInvoiceContent,
  ProformaInvoiceRecord,
  ProformaListQuery,
  ProformaStatus,
  SignupProformaPreview,
} from './proforma-model.js';

/** The states whose subscriptions renew, so have a next renewal to show. */
const RENEWING_STATES: readonly string[] = ['trialing', 'active', 'soft_failure', 'past_due', 'unpaid'];

const STATUSES: readonly ProformaStatus[] = ['draft', 'voided'];
const DEFAULT_PER_PAGE = 20;
const MAX_PER_PAGE = 200;

/**
 * Stands in for a card when a signup's proforma invoice brings none (the service makes them from
 * a product and a customer only): the signup it runs would otherwise refuse to charge. The
 * simulated gateway never sees a card.
 */
const STAND_IN_PAYMENT_PROFILE = {
  vaultToken: 'proforma',
  lastFour: '0000',
  expirationMonth: 12,
  expirationYear: 2199,
} as const;

/** A page of a subscription's proforma invoices. */
export interface ProformaInvoicePage {
  readonly proformaInvoices: ProformaInvoiceRecord[];
  readonly total: number;
  readonly page: number;
  readonly perPage: number;
}

/** Options of {@link ProformaInvoiceService}. */
export interface ProformaInvoiceOptions {
  /**
   * The storage signup proformas run their rolled-back signup on (default the commands' storage).
   * Nothing is charged, so the engine passes its storage without the live-site payment guard.
   */
  readonly previewStorage?: Storage;
}

/** Options of {@link ProformaInvoiceService.previewSignup}. */
export interface SignupProformaOptions {
  /** Also show the first renewal (`include=next_proforma_invoice`). */
  readonly includeNext?: boolean;
}

/** Proforma invoices of subscriptions and signups. */
export class ProformaInvoiceService {
  readonly #deps: SubscriptionDeps;
  readonly #previewStorage: Storage;

  constructor(deps: SubscriptionDeps, options: ProformaInvoiceOptions = {}) {
    this.#deps = deps;
    this.#previewStorage = options.previewStorage ?? deps.storage;
  }

  /** The storage, clock and gateway the commands run on. */
  protected get deps(): SubscriptionDeps {
    return this.#deps;
  }

  /**
   * Makes and keeps a proforma invoice of the subscription's next renewal: a `draft` with a uid
   * and the site's next proforma number. Only a live subscription (trialing, active, in dunning or
   * unpaid) renews; a delayed signup not started yet (`awaiting_signup`) has the invoice its start
   * will issue kept instead (see {@link preview}); any other is refused (422).
   */
  async create(subdomain: string, subscriptionId: number): Promise<ProformaInvoiceRecord> {
    const stored = await runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      if (subscription.state === 'awaiting_signup') return undefined;
      return store(ctx.tx, await renewalContent(ctx.tx, site, subscription, ctx.now));
    });
    if (stored !== undefined) return stored;
    // The start is written in a rolled-back transaction of its own, then the proforma is kept if
    // the subscription is still as the start was written from.
    const start = await this.#startContent(subdomain, subscriptionId);
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      if (start === undefined || subscription.version !== start.version)
        throw new BillingError(
          'conflict',
          'The subscription changed while its proforma invoice was made; nothing was kept. Try again.',
        );
      return store(ctx.tx, { ...start.content, createdAt: ctx.now });
    });
  }

  /**
   * What {@link create} would keep, without keeping it (no uid, no number). For a delayed signup
   * not started yet (`awaiting_signup`) that is the invoice its start will issue at
   * `initial_billing_at`, dated that day: the start is written as the due work will write it
   * (`writeStartForPreview`, which the signup preview and the signup proforma use too) in a
   * transaction that is rolled back, and its signup invoice read.
   */
  async preview(subdomain: string, subscriptionId: number): Promise<ProformaInvoiceContent> {
    const content = await runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const subscription = await loadSubscription(tx, site.id, subscriptionId);
      if (subscription.state === 'awaiting_signup') return undefined;
      return renewalContent(tx, site, subscription, this.#deps.clock.now());
    });
    if (content !== undefined) return content;
    const start = await this.#startContent(subdomain, subscriptionId);
    // Started between the two reads: its next renewal is the proforma now.
    return start?.content ?? this.preview(subdomain, subscriptionId);
  }

  /**
   * The proforma content of an `awaiting_signup` subscription's start and the subscription version
   * it was written from, in a transaction that is always rolled back; undefined when the
   * subscription is no longer awaiting its signup.
   */
  async #startContent(
    subdomain: string,
    subscriptionId: number,
  ): Promise<{ content: ProformaInvoiceContent; version: number } | undefined> {
    const now = this.#deps.clock.now();
    return rolledBack(this.#previewStorage, async (tx) => {
      const site = await loadSite(tx, subdomain);
      const subscription = await loadSubscription(tx, site.id, subscriptionId);
      if (subscription.state !== 'awaiting_signup') return undefined;
      const { current } = await startedContent(tx, site, subscription, now);
      return { content: current, version: subscription.version };
    });
  }

  /**
   * The subscription's proforma invoices (`not_found` for an unknown subscription), by number,
   * newest first unless `direction` is `asc`, of one status and within a range of delivery dates
   * when asked. A filter that cannot match as written is refused (422).
   */
  async list(subdomain: string, subscriptionId: number, query: ProformaListQuery = {}): Promise<ProformaInvoicePage> {
    const filter = readListQuery(query);
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      await loadSubscription(tx, site.id, subscriptionId);
      const { proformaInvoices, total } = await tx.proformaInvoices.list(site.id, {
        subscriptionId,
        ...filter.where,
        direction: filter.direction,
        offset: (filter.page - 1) * filter.perPage,
        limit: filter.perPage,
      });
      return { proformaInvoices, total, page: filter.page, perPage: filter.perPage };
    });
  }

  /** A proforma invoice of the site by uid; `not_found` otherwise. */
  async get(subdomain: string, uid: string): Promise<ProformaInvoiceRecord> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => loadProforma(tx, site.id, uid));
  }

  /** Voids a draft proforma invoice, once; a reason is required. A voided one is refused (422). */
  async void(subdomain: string, uid: string, reason: string): Promise<ProformaInvoiceRecord> {
    const why = typeof reason === 'string' ? reason.trim() : '';
    if (why === '') throw invalid('Reason: cannot be blank.', 'reason');
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const found = await loadProforma(ctx.tx, site.id, uid);
      const voided =
        found.status === 'draft' ? await ctx.tx.proformaInvoices.void(site.id, found.id, ctx.now, why) : undefined;
      if (voided === undefined)
        throw invalid('Proforma invoice: only a draft proforma invoice can be voided.', 'status');
      return voided;
    });
  }

  /**
   * Makes and keeps a proforma invoice of what signing up with `input` would bill now (its
   * subscription id is null; its customer id is the existing customer's, when the signup names
   * one). Errors are the signup's.
   */
  async createSignup(subdomain: string, input: CreateSubscriptionInput): Promise<ProformaInvoiceRecord> {
    const { current } = await this.#signup(subdomain, input, false);
    return runCommand(this.#deps, async (ctx) => {
      await loadSite(ctx.tx, subdomain);
      return store(ctx.tx, { ...current, createdAt: ctx.now });
    });
  }

  /** What signing up with `input` would bill now and, with `includeNext`, at its first renewal; nothing is kept. */
  async previewSignup(
    subdomain: string,
    input: CreateSubscriptionInput,
    options: SignupProformaOptions = {},
  ): Promise<SignupProformaPreview> {
    return this.#signup(subdomain, input, options.includeNext === true);
  }

  async #signup(
    subdomain: string,
    input: CreateSubscriptionInput,
    includeNext: boolean,
  ): Promise<SignupProformaPreview> {
    // An existing customer is named by id, by reference, or by one of its payment profiles.
    const namesCustomer =
      input.customerId !== undefined || input.customerReference !== undefined || input.paymentProfileId !== undefined;
    if (!namesCustomer && input.customer === undefined) {
      throw invalid(
        'Customer: a customer_id or customer_attributes (first name, last name, email) must be given.',
        'customer',
      );
    }
    const signup: CreateSubscriptionInput =
      input.creditCard === undefined && input.paymentProfile === undefined && input.paymentProfileId === undefined
        ? { ...input, paymentProfile: STAND_IN_PAYMENT_PROFILE }
        : input;
    const remittance = input.paymentCollectionMethod === 'remittance' || input.paymentCollectionMethod === 'invoice';
    const collectionMethod = remittance ? 'remittance' : 'automatic';
    const outcome = await previewCommand(
      this.#previewStorage,
      (storage, gateway) => previewEngine(storage, gateway, this.#deps),
      async (engine) => {
        const view = await engine.subscriptions.create(subdomain, signup);
        return engine.storage.transaction(async (tx): Promise<SignupProformaPreview> => {
          const site = await loadSite(tx, subdomain);
          // The customer exists outside the preview only when the signup named it.
          const customerId = namesCustomer ? view.subscription.customerId : null;
          const now = this.#deps.clock.now();
          // A delayed signup bills at its start: written as the due work will write it then.
          const { current, base } = await startedContent(tx, site, view.subscription, now);
          const unbound = { subscriptionId: null, customerId, collectionMethod } as const;
          return {
            current: { ...current, ...unbound, customer: { ...current.customer, customerId } },
            next: includeNext ? { ...base, ...unbound, customer: { ...base.customer, customerId } } : null,
          };
        });
      },
    );
    return outcome.result;
  }
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const PROFORMA_METHODS = ['create', 'preview', 'list', 'get', 'void', 'createSignup', 'previewSignup'] as const;

/** A uid as the service spells proforma invoice uids: `pro_` and 14 lower-case base-32 characters. */
export function proformaUid(): string {
  const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
  let out = 'pro_';
  for (const byte of randomBytes(14)) out += alphabet[byte % 32];
  return out;
}

/**
 * The proforma content of what `subscription` bills now, in a transaction the caller rolls back:
 * a signup's own invoice (issued by the signup just run), or, for an `awaiting_signup` one, the
 * invoice its start issues, written here as the due work will write it at `initial_billing_at`
 * (`writeStartForPreview`) and dated that day. A start or signup that bills nothing has no lines.
 * `base` is the renewal after it, whose fields (seller, customer, product) the content shares.
 */
async function startedContent(
  tx: StorageTransaction,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  now: Date,
): Promise<{ current: ProformaInvoiceContent; base: ProformaInvoiceContent }> {
  const awaiting = subscription.state === 'awaiting_signup';
  const before = awaiting ? await tx.invoices.listForSubscription(site.id, subscription.id) : [];
  const billed = awaiting ? await writeStartForPreview(tx, site, subscription) : subscription;
  const invoices = await tx.invoices.listForSubscription(site.id, billed.id);
  const issued = awaiting ? invoices.find((i) => !before.some((b) => b.id === i.id)) : invoices[0];
  const base = await renewalContent(tx, site, billed, now, { live: false });
  if (issued !== undefined) return { current: fromInvoice(issued, base, now), base };
  const empty = emptyContent(base, now, site.timeZone);
  return {
    current: awaiting
      ? { ...empty, deliveryDate: localDateString(subscription.currentPeriodEndsAt, site.timeZone) }
      : empty,
    base,
  };
}

async function store(tx: StorageTransaction, content: ProformaInvoiceContent): Promise<ProformaInvoiceRecord> {
  const number = await tx.proformaInvoices.nextNumber(content.siteId);
  return tx.proformaInvoices.insert({
    ...content,
    uid: proformaUid(),
    number,
    status: 'draft',
    voidedAt: null,
    voidReason: null,
  });
}

async function loadProforma(tx: StorageTransaction, siteId: number, uid: string): Promise<ProformaInvoiceRecord> {
  const found = typeof uid === 'string' && uid !== '' ? await tx.proformaInvoices.findByUid(siteId, uid) : undefined;
  if (found === undefined) throw notFound('Proforma invoice', uid);
  return found;
}

/**
 * The subscription's next renewal as a proforma invoice: its lines, per-line discounts, discounts
 * per coupon and total from the billing manifest (the renewal's own assessment and lines: after an
 * advance invoice, only the difference the renewal bills), dated the day the renewal is due. With
 * `live` (the default) a subscription that does not renew is refused.
 */
async function renewalContent(
  tx: StorageTransaction,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  now: Date,
  options: { readonly live?: boolean } = {},
): Promise<ProformaInvoiceContent> {
  if (
    options.live !== false &&
    (!RENEWING_STATES.includes(subscription.state) || subscription.nextAssessmentAt === null)
  ) {
    throw new BillingError(
      'invalid_transition',
      `Subscription: a proforma invoice can only be made for a live subscription; this one is ${subscription.state}.`,
    );
  }
  const manifest = await nextBillingManifest(tx, site, subscription, now);
  const version = await tx.catalog.findProductVersion(site.id, subscription.productId, subscription.productVersion);
  if (version === undefined)
    throw new BillingError('storage', `Subscription ${subscription.id} refers to a missing product version.`);
  const product = await tx.catalog.findProduct(site.id, subscription.productId);
  const family = product === undefined ? undefined : await tx.catalog.findFamily(site.id, product.familyId);
  const lineItems = manifest.lineItems.map((item) => ({
    title: item.memo,
    description: item.kind,
    quantity: '1',
    unitPriceInCents: item.amountInCents,
    subtotalInCents: item.amountInCents,
    discountInCents: item.discountAmountInCents,
    taxInCents: 0,
    totalInCents: item.amountInCents - item.discountAmountInCents,
    periodStart: manifest.startDate,
    periodEnd: manifest.endDate,
    productId: item.componentId === null ? subscription.productId : null,
    componentId: item.componentId,
    kind: item.kind,
  }));
  return {
    siteId: site.id,
    subscriptionId: subscription.id,
    customerId: subscription.customerId,
    role: 'proforma_adhoc',
    collectionMethod: collectionMethodOf(subscription),
    deliveryDate: localDateString(manifest.startDate, site.timeZone),
    currency: site.currency,
    memo: '',
    seller: sellerOf(site),
    customer: (await customerSnapshotOf(tx, site.id, subscription)).snapshot,
    productName: version.terms.name,
    productFamilyName: family?.name ?? null,
    periodStart: manifest.startDate,
    periodEnd: manifest.endDate,
    lineItems,
    discounts: manifest.discounts.map((d) => ({ title: d.memo, couponCode: d.code, amountInCents: -d.amountInCents })),
    subtotalInCents: manifest.subtotalInCents,
    discountInCents: manifest.totalDiscountInCents,
    taxInCents: manifest.totalTaxInCents,
    totalInCents: manifest.totalInCents,
    dueInCents: manifest.totalInCents,
    createdAt: now,
  };
}

/** The signup's invoice (issued inside the rolled-back signup) as a proforma invoice's content. */
function fromInvoice(invoice: InvoiceRecord, base: ProformaInvoiceContent, now: Date): ProformaInvoiceContent {
  return {
    ...base,
    deliveryDate: invoice.issueDate,
    memo: invoice.memo,
    seller: invoice.seller,
    customer: invoice.customer,
    productName: invoice.productName,
    productFamilyName: invoice.productFamilyName,
    periodStart: invoice.periodStart,
    periodEnd: invoice.periodEnd,
    lineItems: invoice.lineItems.map(({ transactionId: _line, ...item }) => item),
    discounts: invoice.discounts.map((d) => ({
      title: d.title,
      couponCode: d.couponCode,
      amountInCents: d.amountInCents,
    })),
    subtotalInCents: invoice.subtotalInCents,
    discountInCents: invoice.discountInCents,
    taxInCents: invoice.taxInCents,
    totalInCents: invoice.totalInCents,
    dueInCents: invoice.totalInCents,
    createdAt: now,
  };
}

/** A signup that bills nothing (a free trial): no lines, dated today. */
function emptyContent(base: ProformaInvoiceContent, now: Date, timeZone: string): ProformaInvoiceContent {
  return {
    ...base,
    deliveryDate: localDateString(now, timeZone),
    periodStart: null,
    periodEnd: null,
    lineItems: [],
    discounts: [],
    subtotalInCents: 0,
    discountInCents: 0,
    taxInCents: 0,
    totalInCents: 0,
    dueInCents: 0,
    createdAt: now,
  };
}

/** The read query of a list, checked: what cannot match as written is refused. */
function readListQuery(query: ProformaListQuery): {
  where: { status?: ProformaStatus; deliveryFrom?: string; deliveryTo?: string };
  direction: 'asc' | 'desc';
  page: number;
  perPage: number;
} {
  const errors = new ValidationCollector();
  const status = query.status;
  if (status !== undefined && !STATUSES.includes(status)) {
    errors.add(`Status: must be one of ${STATUSES.join(', ')}.`, 'status');
  }
  for (const [label, value] of [
    ['Start date', query.startDate],
    ['End date', query.endDate],
  ] as const) {
    if (value !== undefined && !isCalendarDate(value)) errors.add(`${label}: must be a date (YYYY-MM-DD).`);
  }
  const direction = query.direction ?? 'desc';
  if (direction !== 'asc' && direction !== 'desc') errors.add("Direction: must be 'asc' or 'desc'.", 'direction');
  const page = query.page ?? 1;
  if (!Number.isSafeInteger(page) || page < 1) errors.add('Page: must be a positive integer.', 'page');
  const perPage = query.perPage ?? DEFAULT_PER_PAGE;
  if (!Number.isSafeInteger(perPage) || perPage < 1) errors.add('Per page: must be a positive integer.', 'per_page');
  errors.throwIfAny();
  return {
    where: {
      ...(status === undefined ? {} : { status }),
      ...(query.startDate === undefined ? {} : { deliveryFrom: query.startDate }),
      ...(query.endDate === undefined ? {} : { deliveryTo: query.endDate }),
    },
    direction,
    page,
    perPage: Math.min(perPage, MAX_PER_PAGE),
  };
}

function isCalendarDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const parsed = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().startsWith(text);
}
