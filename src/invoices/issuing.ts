/**
 * What posting ledger lines does to the documents built from them (issue #17). Called by
 * `services/posting.ts` after every append, in the same transaction, so a document and the lines
 * it shows commit together or not at all:
 *
 * - the billed lines of one post (charges, credits, prorated credits, coupon discounts) become one
 *   invoice, numbered from the site's gap-free series;
 * - payment lines pay open invoices: the post's own invoice (or the one the caller names) first,
 *   then the oldest;
 * - money the subscription holds beyond its open invoices (an overpayment, a manual credit, a
 *   negative adjustment, an invoice whose total is negative) is applied to open invoices as a
 *   credit, so an invoice is never left due while the subscription is in credit;
 * - a refund of a payment that paid invoices issues a credit note for each, never more than the
 *   invoice's paid amount.
 */
import { randomBytes } from 'node:crypto';
import { localDateString } from '../domain/time/index.js';
import type { NewInvoice, NewInvoiceEvent } from '../ports/invoice-records.js';
import type {
  CustomerRecord,
  SiteRecord,
  StorageTransaction,
  SubscriptionRecord,
  TransactionRecord,
} from '../ports/storage.js';
import { isPrepaid } from '../services/prepaid-configuration.js';
import { recordDocumentEvent, recordDocumentEvents } from './document-events.js';
import type {
  CreditNoteRecord,
  InvoiceCustomerSnapshot,
  InvoiceDiscount,
  InvoiceEventType,
  InvoiceLineItem,
  InvoiceRecord,
  InvoiceRole,
  InvoiceSeller,
} from './model.js';
import { creditNoteEventPayload, invoiceEventPayload } from './payloads.js';
import { NO_TAX, type TaxCalculator } from './tax.js';

/** What a caller of `post()` may tell the invoicing about its lines. */
export interface DocumentOptions {
  /** False for lines that are not billed on an invoice (manual credits, void reversals). Default true. */
  readonly invoice?: boolean;
  /** The invoice's role when the lines alone do not tell it. */
  readonly role?: InvoiceRole;
  /** A memo for the issued invoice. */
  readonly memo?: string;
  /** The post's payments pay this invoice first. */
  readonly payInvoiceUid?: string;
  /** A refund in the post returns money paid on this invoice first. */
  readonly refundInvoiceUid?: string;
  /** The post reverses this open invoice's lines: it becomes `voided`. */
  readonly voidInvoiceUid?: string;
  /** The post restores this voided invoice's lines: it becomes `open` again. */
  readonly reopenInvoiceUid?: string;
  /** Days until due of the issued invoice; default the site's net terms (a draft keeps its own). */
  readonly netTermsDays?: number;
  /** Why (void, reopen), for the invoice's events. */
  readonly reason?: string;
  /**
   * The billed lines issue this draft invoice (its uid, titles, quantities and terms kept; it takes
   * the next number) instead of a new one. Its line items are the lines, in order.
   */
  readonly issueDraftUid?: string;
}

/** Ledger kinds of adjustments that are billed: a coupon's discount and a migration's prorated credit. */
const BILLED_ADJUSTMENTS: ReadonlySet<string> = new Set(['coupon', 'prorated']);

/** Whether a ledger line belongs on an invoice. */
export function isBilledLine(line: Pick<TransactionRecord, 'type' | 'kind'>): boolean {
  return (
    line.type === 'charge' ||
    line.type === 'credit' ||
    (line.type === 'adjustment' && line.kind !== null && BILLED_ADJUSTMENTS.has(line.kind))
  );
}

/** A uid as the service spells them: a prefix and 14 lower-case base-32 characters. */
export function documentUid(prefix: 'inv' | 'cn'): string {
  const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
  const bytes = randomBytes(14);
  let out = `${prefix}_`;
  for (const byte of bytes) out += alphabet[byte % 32];
  return out;
}

/** The site's invoice numbering prefix and net terms (none and zero on sites made before invoices). */
export function invoiceTerms(site: SiteRecord): { prefix: string; netTermsDays: number } {
  return { prefix: site.settings.invoices?.prefix ?? '', netTermsDays: site.settings.invoices?.netTermsDays ?? 0 };
}

/** `date` (`YYYY-MM-DD`) plus `days` calendar days. */
export function addDays(date: string, days: number): string {
  const at = new Date(`${date}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() + days);
  return at.toISOString().slice(0, 10);
}

/**
 * Invoices issued in a transaction that numbers at its end ({@link deferInvoiceNumbering}) and not
 * numbered yet, in issue order, with the prefix they are numbered under.
 */
const unnumbered = new WeakMap<StorageTransaction, { invoice: InvoiceRecord; prefix: string }[]>();

/**
 * Lets the invoices issued in `tx` take their numbers when the transaction is about to end
 * ({@link numberDeferredInvoices}) rather than when they are issued. Numbers stay gap-free either
 * way: the number is taken from the site's counter row, whose row lock is held until the
 * transaction ends. Taken at the end, that lock is held for a few statements rather than for the
 * rest of the transaction, so a site's concurrent renewals no longer queue behind each other's
 * whole transactions (issue 18). Until it is numbered an invoice is stored without a number,
 * like a draft, and its `issue_invoice` and `invoice_issued` events wait with the number; a later
 * post to the same subscription in the transaction numbers it first, so its events stay in order.
 * The caller must call {@link numberDeferredInvoices} before the transaction commits.
 */
export function deferInvoiceNumbering(tx: StorageTransaction): void {
  if (!unnumbered.has(tx)) unnumbered.set(tx, []);
}

/**
 * Numbers the invoices issued in `tx` since {@link deferInvoiceNumbering} (only those of
 * `subscriptionId` when given), in issue order, and records their issue events.
 */
export async function numberDeferredInvoices(
  tx: StorageTransaction,
  subscriptionId?: number,
): Promise<InvoiceRecord[]> {
  const pending = unnumbered.get(tx);
  if (pending === undefined || pending.length === 0) return [];
  const taken = pending.filter((p) => subscriptionId === undefined || p.invoice.subscriptionId === subscriptionId);
  if (taken.length === 0) return [];
  unnumbered.set(
    tx,
    pending.filter((p) => !taken.includes(p)),
  );
  // One block of consecutive numbers per site, handed out in issue order: the numbers are those
  // one counter step per invoice would give, for one statement per site instead of one per invoice.
  const firstOf = new Map<number, number>();
  for (const [siteId, count] of countBySite(taken.map((p) => p.invoice.siteId))) {
    firstOf.set(siteId, (await tx.invoices.nextSequence(siteId, 'invoice', count)) - count + 1);
  }
  const done: InvoiceRecord[] = [];
  for (const { invoice, prefix } of taken) {
    const sequence = firstOf.get(invoice.siteId)!;
    firstOf.set(invoice.siteId, sequence + 1);
    const numbered = { ...invoice, number: `${prefix}${sequence}`, sequenceNumber: sequence };
    // Unchanged since it was issued: a later change would have been a post of its subscription,
    // which numbers it first (attachDocuments).
    const stored = await tx.invoices.update(numbered);
    if (stored === undefined) throw new Error(`Invoice ${invoice.uid} vanished before it was numbered.`);
    done.push(numbered);
  }
  await announceIssues(tx, done);
  return done;
}

/** How many of `siteIds` each site has, in order of first appearance. */
function countBySite(siteIds: readonly number[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const siteId of siteIds) counts.set(siteId, (counts.get(siteId) ?? 0) + 1);
  return counts;
}

/** The `issue_invoice` invoice event and the `invoice_issued` outbox event of a numbered invoice, as issued. */
async function announceIssue(tx: StorageTransaction, invoice: InvoiceRecord): Promise<void> {
  await announceIssues(tx, [invoice]);
}

/**
 * {@link announceIssue} for several invoices, in order: their invoice events in one insert per
 * site and their outbox events in one append.
 */
async function announceIssues(tx: StorageTransaction, invoices: readonly InvoiceRecord[]): Promise<void> {
  if (invoices.length === 0) return;
  const bySite = new Map<number, NewInvoiceEvent[]>();
  for (const invoice of invoices) {
    const events = bySite.get(invoice.siteId) ?? [];
    events.push({
      invoiceUid: invoice.uid,
      eventType: 'issue_invoice',
      data: { number: invoice.number, total_amount_in_cents: invoice.totalInCents, role: invoice.role },
      createdAt: invoice.updatedAt,
    });
    bySite.set(invoice.siteId, events);
  }
  for (const [siteId, events] of bySite) await tx.invoices.appendEvents(siteId, events);
  await recordDocumentEvents(
    tx,
    invoices.map((invoice) => ({
      siteId: invoice.siteId,
      key: 'invoice_issued' as const,
      subjectType: 'invoice',
      subjectId: invoice.id,
      payload: invoiceEventPayload(invoice),
      occurredAt: invoice.updatedAt,
    })),
  );
}

/** Reads shared by the documents of one post. */
class PostScope {
  #site: SiteRecord | undefined;
  readonly #subscriptions = new Map<number, SubscriptionRecord>();

  constructor(
    readonly tx: StorageTransaction,
    readonly siteId: number,
  ) {}

  async site(): Promise<SiteRecord> {
    this.#site ??= await this.tx.sites.findById(this.siteId);
    if (this.#site === undefined) throw new Error(`Site ${this.siteId} vanished while posting.`);
    return this.#site;
  }

  async subscription(id: number): Promise<SubscriptionRecord> {
    let found = this.#subscriptions.get(id);
    if (found === undefined) {
      found = await this.tx.subscriptions.findById(this.siteId, id);
      if (found === undefined) throw new Error(`Subscription ${id} vanished while posting.`);
      this.#subscriptions.set(id, found);
    }
    return found;
  }
}

/**
 * Attaches the documents of a post's written lines. Lines of several subscriptions are handled
 * one subscription at a time, in the order they first appear.
 */
export async function attachDocuments(
  tx: StorageTransaction,
  written: readonly TransactionRecord[],
  options: DocumentOptions = {},
  tax: TaxCalculator = NO_TAX,
): Promise<void> {
  if (written.length === 0) return;
  const bySubscription = new Map<number, TransactionRecord[]>();
  for (const line of written) {
    const group = bySubscription.get(line.subscriptionId);
    if (group) group.push(line);
    else bySubscription.set(line.subscriptionId, [line]);
  }
  const scope = new PostScope(tx, written[0]!.siteId);
  for (const lines of bySubscription.values()) await attachForSubscription(scope, lines, options, tax);
}

async function attachForSubscription(
  scope: PostScope,
  lines: readonly TransactionRecord[],
  options: DocumentOptions,
  tax: TaxCalculator,
): Promise<void> {
  const { tx, siteId } = scope;
  const subscriptionId = lines[0]!.subscriptionId;
  const now = lines[0]!.createdAt;
  // An invoice of this subscription still waiting for its number is numbered before this post
  // changes anything, so that its issue comes first among its events.
  await numberDeferredInvoices(tx, subscriptionId);
  const site = await scope.site();
  const ledger = new InvoiceBook(tx, siteId, subscriptionId, now, site.timeZone);
  let preferred: string | undefined;
  let fresh: InvoiceRecord | undefined;

  if (options.voidInvoiceUid !== undefined) await ledger.void(options.voidInvoiceUid, options.reason ?? '');
  if (options.reopenInvoiceUid !== undefined) await ledger.reopen(options.reopenInvoiceUid);

  const billed = options.invoice === false ? [] : lines.filter(isBilledLine);
  if (billed.length > 0) {
    const invoice = await issueInvoice(scope, billed, options, tax);
    ledger.add(invoice);
    preferred = invoice.uid;
    fresh = invoice;
  }
  preferred = options.payInvoiceUid ?? preferred;

  const payments = lines.filter((l) => l.type === 'payment' && l.amountInCents > 0);
  for (const payment of payments) await ledger.applyPayment(payment, preferred);

  const balance = lines.at(-1)!.endingBalanceInCents;
  await ledger.applyCredit(balance, preferred);

  for (const refund of lines.filter((l) => l.type === 'refund' && l.paymentId !== null)) {
    await issueCreditNotes(scope, ledger, refund, options.refundInvoiceUid);
  }
  if (fresh !== undefined && fresh.sequenceNumber === null && ledger.changed(fresh.uid)) {
    // The post changes its own fresh invoice (a payment or credit applied to it): it is numbered and
    // its issue recorded now, before the changes and their events are saved.
    const numbered = (await numberDeferredInvoices(tx, subscriptionId)).find((i) => i.uid === fresh.uid);
    if (numbered?.number == null || numbered.sequenceNumber === null)
      throw new Error(`Invoice ${fresh.uid} was not numbered.`);
    ledger.numbered(fresh.uid, numbered.number, numbered.sequenceNumber);
  }
  await ledger.save();
}

/**
 * The invoices of one subscription touched by a post, loaded once and saved once, with the
 * events each change adds. Only what the post needs is read: its open invoices (what a payment
 * or credit applies to), an invoice named by uid, and every invoice only for a refund (which
 * looks for the invoices its payment paid); so a renewal's cost does not grow with the number of
 * invoices the subscription has had (issue 18).
 */
class InvoiceBook {
  /** Every invoice read or written by this post, by uid, in its latest state. */
  readonly #known = new Map<string, InvoiceRecord>();
  #openLoaded = false;
  #allLoaded = false;
  readonly #changed = new Set<string>();
  readonly #events: { uid: string; type: InvoiceEventType; data: Record<string, unknown> }[] = [];

  constructor(
    readonly tx: StorageTransaction,
    readonly siteId: number,
    readonly subscriptionId: number,
    readonly now: Date,
    readonly zone: string,
  ) {}

  /** Every invoice of the subscription, in number order (drafts last). */
  async all(): Promise<InvoiceRecord[]> {
    if (!this.#allLoaded) {
      this.#learn(await this.tx.invoices.listForSubscription(this.siteId, this.subscriptionId));
      this.#allLoaded = true;
      this.#openLoaded = true;
    }
    return this.#ordered((i) => i.subscriptionId === this.subscriptionId);
  }

  /** The subscription's open invoices, in number order. */
  async #open(): Promise<InvoiceRecord[]> {
    if (!this.#openLoaded) {
      this.#learn(await this.tx.invoices.listForSubscription(this.siteId, this.subscriptionId, 'open'));
      this.#openLoaded = true;
    }
    return this.#ordered((i) => i.subscriptionId === this.subscriptionId && i.status === 'open');
  }

  /** Keeps what storage answered, except where this post already holds a newer state. */
  #learn(invoices: readonly InvoiceRecord[]): void {
    for (const invoice of invoices) if (!this.#known.has(invoice.uid)) this.#known.set(invoice.uid, invoice);
  }

  #ordered(keep: (invoice: InvoiceRecord) => boolean): InvoiceRecord[] {
    return [...this.#known.values()].filter(keep).sort(byNumberThenId);
  }

  add(invoice: InvoiceRecord): void {
    // A fresh invoice is already stored and evented; it joins what the rest of the post sees.
    this.#known.set(invoice.uid, invoice);
  }

  async find(uid: string): Promise<InvoiceRecord | undefined> {
    let invoice = this.#known.get(uid);
    if (invoice === undefined && !this.#allLoaded) {
      invoice = await this.tx.invoices.findByUid(this.siteId, uid);
      if (invoice !== undefined) this.#learn([invoice]);
    }
    return invoice?.subscriptionId === this.subscriptionId ? invoice : undefined;
  }

  replace(next: InvoiceRecord): void {
    this.#known.set(next.uid, next);
    this.#changed.add(next.uid);
  }

  /** Whether this post changed the invoice. */
  changed(uid: string): boolean {
    return this.#changed.has(uid);
  }

  /** Gives a changed invoice the number it was just given in storage, so that saving it keeps the number. */
  numbered(uid: string, number: string, sequenceNumber: number): void {
    const invoice = this.#known.get(uid);
    if (invoice === undefined) throw new Error(`Invoice ${uid} is not in this post.`);
    this.#known.set(uid, { ...invoice, number, sequenceNumber });
  }

  event(uid: string, type: InvoiceEventType, data: Record<string, unknown>): void {
    this.#events.push({ uid, type, data });
  }

  /** Open invoices with something due: the preferred one first, then by number. */
  async openOrder(preferred: string | undefined): Promise<InvoiceRecord[]> {
    const open = (await this.#open()).filter((i) => i.dueInCents > 0);
    const first = open.filter((i) => i.uid === preferred);
    return [...first, ...open.filter((i) => i.uid !== preferred)];
  }

  async void(uid: string, reason: string): Promise<void> {
    const invoice = await this.find(uid);
    if (invoice === undefined) throw new Error(`Invoice ${uid} is not the subscription's.`);
    const voided: InvoiceRecord = { ...invoice, status: 'voided', dueInCents: 0, updatedAt: this.now };
    this.replace(voided);
    this.event(uid, 'void_invoice', { reason, credits_returned_in_cents: invoice.creditInCents });
    await recordDocumentEvent(this.tx, {
      siteId: this.siteId,
      key: 'invoice_voided',
      subjectType: 'invoice',
      subjectId: invoice.id,
      payload: invoiceEventPayload(voided, { reason }),
      occurredAt: this.now,
    });
  }

  async reopen(uid: string): Promise<void> {
    const invoice = await this.find(uid);
    if (invoice === undefined) throw new Error(`Invoice ${uid} is not the subscription's.`);
    // The credit it held went back to the subscription when it was voided; it is applied afresh below.
    this.replace({
      ...invoice,
      status: invoice.totalInCents > 0 ? 'open' : 'paid',
      credits: [],
      creditInCents: 0,
      dueInCents: Math.max(0, invoice.totalInCents - invoice.paidInCents),
      updatedAt: this.now,
    });
    this.event(uid, 'change_invoice_status', { from_status: 'voided', to_status: 'open' });
  }

  async applyPayment(payment: TransactionRecord, preferred: string | undefined): Promise<void> {
    let remaining = payment.amountInCents;
    for (const invoice of await this.openOrder(preferred)) {
      if (remaining === 0) break;
      const amount = Math.min(remaining, invoice.dueInCents);
      remaining -= amount;
      const method = payment.kind === 'manual' || payment.kind === 'prepayment' ? 'external' : 'payment';
      this.#settle(invoice, {
        payments: [
          ...invoice.payments,
          {
            transactionId: payment.id,
            amountInCents: amount,
            memo: payment.memo,
            appliedAt: this.now,
            method,
            gatewayTransactionId: payment.gatewayTransactionId,
          },
        ],
        paidInCents: invoice.paidInCents + amount,
      });
      this.event(invoice.uid, 'apply_payment', {
        transaction_id: payment.id,
        amount_in_cents: amount,
        payment_method: method,
        memo: payment.memo,
      });
    }
  }

  /**
   * Applies what the subscription holds beyond its open invoices. With every billed line on an
   * invoice, `balance = open dues - unapplied money`, so the unapplied money is `open dues - balance`.
   */
  async applyCredit(balance: number, preferred: string | undefined): Promise<void> {
    const open = await this.openOrder(preferred);
    let available = open.reduce((sum, i) => sum + i.dueInCents, 0) - balance;
    for (const invoice of open) {
      if (available <= 0) break;
      const amount = Math.min(available, invoice.dueInCents);
      available -= amount;
      const uid = `credit_${invoice.uid}_${invoice.credits.length + 1}`;
      const memo = 'Applied from the subscription credit balance';
      this.#settle(invoice, {
        credits: [...invoice.credits, { uid, memo, amountInCents: amount, appliedAt: this.now }],
        creditInCents: invoice.creditInCents + amount,
      });
      this.event(invoice.uid, 'apply_payment', { amount_in_cents: amount, payment_method: 'credit', memo });
    }
  }

  /** Stores a new state of an invoice's applications, paying it when nothing remains due. */
  #settle(invoice: InvoiceRecord, change: Partial<InvoiceRecord>): void {
    const next = { ...invoice, ...change };
    const due = Math.max(0, next.totalInCents - next.creditInCents - next.paidInCents);
    const paid = due === 0;
    this.replace({
      ...next,
      dueInCents: due,
      status: paid ? 'paid' : next.status,
      paidDate: paid ? localDateString(this.now, this.zone) : next.paidDate,
      updatedAt: this.now,
    });
    if (paid) this.event(invoice.uid, 'change_invoice_status', { from_status: invoice.status, to_status: 'paid' });
  }

  /** Writes the changed invoices and their events. */
  async save(): Promise<void> {
    for (const uid of this.#changed) await this.tx.invoices.update(this.#known.get(uid)!);
    await this.tx.invoices.appendEvents(
      this.siteId,
      this.#events.map((event) => ({
        invoiceUid: event.uid,
        eventType: event.type,
        data: event.data,
        createdAt: this.now,
      })),
    );
    this.#changed.clear();
    this.#events.length = 0;
  }
}

/** The seller as the site shows itself; sites keep no postal address yet, so it is empty. */
export function sellerOf(site: SiteRecord): InvoiceSeller {
  return {
    name: site.name,
    address: { address: null, address2: null, city: null, state: null, zip: null, country: null },
    phone: null,
  };
}

/** The customer and billing address as they are now: the card's billing address when there is one. */
async function customerSnapshot(
  scope: PostScope,
  subscription: SubscriptionRecord,
): Promise<{ customer: CustomerRecord; snapshot: InvoiceCustomerSnapshot }> {
  return customerSnapshotOf(scope.tx, scope.siteId, subscription);
}

/**
 * The customer and billing address of a subscription's document as they are now: the card's
 * billing address when there is one (invoices, and the proforma invoices that show them ahead).
 */
export async function customerSnapshotOf(
  tx: StorageTransaction,
  siteId: number,
  subscription: SubscriptionRecord,
): Promise<{ customer: CustomerRecord; snapshot: InvoiceCustomerSnapshot }> {
  const customer = await tx.customers.findById(siteId, subscription.customerId);
  if (customer === undefined) throw new Error(`Customer ${subscription.customerId} vanished while posting.`);
  const profile =
    subscription.paymentProfileId === null
      ? undefined
      : await tx.customers.findPaymentProfile(siteId, subscription.paymentProfileId);
  const cardAddress = profile?.billingAddress;
  const hasCardAddress = cardAddress !== undefined && Object.values(cardAddress).some((v) => v !== null && v !== '');
  return {
    customer,
    snapshot: {
      customerId: customer.id,
      firstName: customer.firstName,
      lastName: customer.lastName,
      organization: customer.organization,
      email: customer.email,
      reference: customer.reference,
      billingAddress: hasCardAddress ? cardAddress : customer.address,
    },
  };
}

/**
 * How an invoice of the subscription is collected: prepaid when the subscription is (its charges are
 * paid from its prepayment balance); remittance when it is collected by remittance (the engine never
 * charges it) or has no card to charge; automatic otherwise.
 */
export function collectionMethodOf(subscription: SubscriptionRecord): 'automatic' | 'remittance' | 'prepaid' {
  if (isPrepaid(subscription)) return 'prepaid';
  return subscription.paymentCollectionMethod === 'remittance' || subscription.paymentProfileId === null
    ? 'remittance'
    : 'automatic';
}

/** What the lines say the invoice is for, when the caller did not say. */
function roleOf(lines: readonly TransactionRecord[], subscription: SubscriptionRecord): InvoiceRole {
  const kinds = new Set(lines.map((l) => l.kind));
  if (kinds.has('one_time') || kinds.has('delay_capture')) return 'one_time';
  if (kinds.has('prorated')) return 'migration';
  const billing = lines.filter((l) => l.type !== 'adjustment');
  if (billing.length > 0 && billing.every((l) => l.componentId !== null)) return 'allocation';
  if (subscription.createdAt.getTime() === lines[0]!.createdAt.getTime()) return 'signup';
  return 'renewal';
}

function lineItemOf(line: TransactionRecord, subscription: SubscriptionRecord): InvoiceLineItem {
  const inCurrentPeriod = line.periodIndex !== null && line.periodIndex === subscription.periodIndex;
  return {
    transactionId: line.id,
    title: line.memo,
    description: line.kind ?? line.type,
    quantity: '1',
    unitPriceInCents: line.amountInCents,
    subtotalInCents: line.amountInCents,
    discountInCents: 0,
    taxInCents: 0,
    totalInCents: line.amountInCents,
    periodStart: inCurrentPeriod ? subscription.currentPeriodStartedAt : null,
    periodEnd: inCurrentPeriod ? subscription.currentPeriodEndsAt : null,
    productId: line.componentId === null ? line.productId : null,
    componentId: line.componentId,
    kind: line.kind,
  };
}

/** Whole days from one `YYYY-MM-DD` to another. */
function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

/** A posted line's item with what the merchant wrote on the draft: title, description, quantity, unit price. */
function fromDraft(item: InvoiceLineItem, drafted: InvoiceLineItem): InvoiceLineItem {
  return {
    ...item,
    title: drafted.title,
    description: drafted.description,
    quantity: drafted.quantity,
    unitPriceInCents: drafted.unitPriceInCents,
  };
}

/** One line of a draft ad-hoc invoice: what will be charged when it is issued. */
export interface DraftLine {
  readonly title: string;
  readonly description: string;
  readonly quantity: string;
  readonly unitPriceInCents: number;
  readonly totalInCents: number;
}

/**
 * Stores a draft ad-hoc invoice: nothing is posted and no number is taken (both happen when it is
 * issued, through `post()` with `issueDraftUid`); the snapshots, totals and dates are what they
 * would be if it were issued now, and are taken again at issue. No event is sent for a draft.
 */
export async function insertDraftInvoice(
  tx: StorageTransaction,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  draft: { readonly lines: readonly DraftLine[]; readonly memo: string; readonly netTermsDays?: number },
  now: Date,
): Promise<InvoiceRecord> {
  const scope = new PostScope(tx, site.id);
  const { snapshot } = await customerSnapshot(scope, subscription);
  const version = await tx.catalog.findProductVersion(site.id, subscription.productId, subscription.productVersion);
  const product = await tx.catalog.findProduct(site.id, subscription.productId);
  const family = product === undefined ? undefined : await tx.catalog.findFamily(site.id, product.familyId);
  const total = draft.lines.reduce((sum, l) => sum + l.totalInCents, 0);
  const issueDate = localDateString(now, site.timeZone);
  return tx.invoices.insert({
    uid: documentUid('inv'),
    siteId: site.id,
    subscriptionId: subscription.id,
    customerId: subscription.customerId,
    number: null,
    sequenceNumber: null,
    status: 'draft',
    role: 'adhoc',
    collectionMethod: collectionMethodOf(subscription),
    issueDate,
    dueDate: addDays(issueDate, draft.netTermsDays ?? invoiceTerms(site).netTermsDays),
    paidDate: null,
    currency: site.currency,
    memo: draft.memo,
    seller: sellerOf(site),
    customer: snapshot,
    productName: version?.terms.name ?? null,
    productFamilyName: family?.name ?? null,
    periodIndex: null,
    periodStart: null,
    periodEnd: null,
    lineItems: draft.lines.map((l) => ({
      transactionId: null,
      title: l.title,
      description: l.description,
      quantity: l.quantity,
      unitPriceInCents: l.unitPriceInCents,
      subtotalInCents: l.totalInCents,
      discountInCents: 0,
      taxInCents: 0,
      totalInCents: l.totalInCents,
      periodStart: null,
      periodEnd: null,
      productId: null,
      componentId: null,
      kind: 'adhoc',
    })),
    discounts: [],
    taxes: [],
    credits: [],
    payments: [],
    subtotalInCents: total,
    discountInCents: 0,
    taxInCents: 0,
    totalInCents: total,
    creditInCents: 0,
    paidInCents: 0,
    refundInCents: 0,
    dueInCents: total,
    createdAt: now,
    updatedAt: now,
  });
}

/** Issues the invoice of a post's billed lines: numbered, snapshotted, open (or paid when nothing is due). */
async function issueInvoice(
  scope: PostScope,
  billed: readonly TransactionRecord[],
  options: DocumentOptions,
  tax: TaxCalculator,
): Promise<InvoiceRecord> {
  const { tx, siteId } = scope;
  const site = await scope.site();
  const subscription = await scope.subscription(billed[0]!.subscriptionId);
  const { snapshot } = await customerSnapshot(scope, subscription);
  const now = billed[0]!.createdAt;
  const discountLines = billed.filter((l) => l.type === 'adjustment' && l.kind === 'coupon');
  const lineItems = billed.filter((l) => !discountLines.includes(l)).map((l) => lineItemOf(l, subscription));
  const couponCode = subscription.couponCodes.length === 1 ? subscription.couponCodes[0]! : null;
  const discounts: InvoiceDiscount[] = discountLines.map((l) => ({
    transactionId: l.id,
    title: l.memo,
    couponCode,
    // A coupon line lowers the balance (a negative amount); the discount shows it as a positive amount.
    amountInCents: -l.amountInCents,
  }));
  const taxes = tax.taxesFor({ siteId, subscriptionId: subscription.id, lineItems });
  const subtotal = lineItems.reduce((sum, i) => sum + i.subtotalInCents, 0);
  const discount = discounts.reduce((sum, d) => sum + d.amountInCents, 0);
  const taxTotal = taxes.reduce((sum, t) => sum + t.amountInCents, 0);
  const total = subtotal - discount + taxTotal;
  const terms = invoiceTerms(site);
  const draft =
    options.issueDraftUid === undefined ? undefined : await tx.invoices.findByUid(siteId, options.issueDraftUid);
  if (options.issueDraftUid !== undefined && (draft?.status !== 'draft' || draft.lineItems.length !== lineItems.length))
    throw new Error(`Invoice ${options.issueDraftUid} is not a draft of these lines.`);
  const issueDate = localDateString(now, site.timeZone);
  const netTermsDays =
    draft === undefined ? (options.netTermsDays ?? terms.netTermsDays) : daysBetween(draft.issueDate, draft.dueDate);
  const version = await tx.catalog.findProductVersion(siteId, subscription.productId, subscription.productVersion);
  const product = await tx.catalog.findProduct(siteId, subscription.productId);
  const family = product === undefined ? undefined : await tx.catalog.findFamily(siteId, product.familyId);
  // Taken after every read, or at the transaction's end when it defers numbering: the counter row
  // stays locked until the transaction ends (that is what keeps committed numbers gap-free), and
  // every other issuer of the site waits on it meanwhile.
  const deferred = draft === undefined ? unnumbered.get(tx) : undefined;
  const sequence = deferred === undefined ? await tx.invoices.nextSequence(siteId, 'invoice') : null;
  const periodIndex = billed.reduce<number | null>(
    (max, l) => (l.periodIndex === null ? max : Math.max(max ?? l.periodIndex, l.periodIndex)),
    null,
  );
  const inCurrentPeriod = periodIndex !== null && periodIndex === subscription.periodIndex;
  const nothingDue = total <= 0;
  const record: NewInvoice = {
    uid: draft?.uid ?? documentUid('inv'),
    siteId,
    subscriptionId: subscription.id,
    customerId: subscription.customerId,
    number: sequence === null ? null : `${terms.prefix}${sequence}`,
    sequenceNumber: sequence,
    status: nothingDue ? 'paid' : 'open',
    role: options.role ?? roleOf(billed, subscription),
    collectionMethod: collectionMethodOf(subscription),
    issueDate,
    dueDate: addDays(issueDate, netTermsDays),
    paidDate: nothingDue ? issueDate : null,
    currency: site.currency,
    memo: options.memo ?? draft?.memo ?? '',
    seller: sellerOf(site),
    customer: snapshot,
    productName: version?.terms.name ?? null,
    productFamilyName: family?.name ?? null,
    periodIndex,
    periodStart: inCurrentPeriod ? subscription.currentPeriodStartedAt : null,
    periodEnd: inCurrentPeriod ? subscription.currentPeriodEndsAt : null,
    lineItems: draft === undefined ? lineItems : lineItems.map((item, k) => fromDraft(item, draft.lineItems[k]!)),
    discounts,
    taxes,
    credits: [],
    payments: [],
    subtotalInCents: subtotal,
    discountInCents: discount,
    taxInCents: taxTotal,
    totalInCents: total,
    creditInCents: 0,
    paidInCents: 0,
    refundInCents: 0,
    dueInCents: Math.max(0, total),
    createdAt: draft?.createdAt ?? now,
    updatedAt: now,
  };
  const invoice =
    draft === undefined ? await tx.invoices.insert(record) : await tx.invoices.update({ ...record, id: draft.id });
  if (invoice === undefined) throw new Error(`Draft invoice ${draft?.uid} vanished while issuing.`);
  if (deferred !== undefined) {
    deferred.push({ invoice, prefix: terms.prefix });
    return invoice;
  }
  if (draft !== undefined) {
    await tx.invoices.appendEvent(siteId, {
      invoiceUid: invoice.uid,
      eventType: 'change_invoice_status',
      data: { from_status: 'draft', to_status: invoice.status },
      createdAt: now,
    });
  }
  await announceIssue(tx, invoice);
  return invoice;
}

/**
 * The credit notes of a refund: the refunded payment's money is taken back from the invoices it
 * paid (the caller's invoice first, then the latest), never more than an invoice's paid amount
 * less what was already refunded on it. Money the payment left unapplied needs no note.
 */
async function issueCreditNotes(
  scope: PostScope,
  book: InvoiceBook,
  refund: TransactionRecord,
  preferredUid: string | undefined,
): Promise<void> {
  const { tx, siteId } = scope;
  const site = await scope.site();
  const paidBy = (await book.all()).filter((i) => i.payments.some((p) => p.transactionId === refund.paymentId));
  const ordered = [
    ...paidBy.filter((i) => i.uid === preferredUid),
    ...paidBy.filter((i) => i.uid !== preferredUid).reverse(),
  ];
  let remaining = refund.amountInCents;
  for (const invoice of ordered) {
    if (remaining === 0) break;
    const paidByThis = invoice.payments
      .filter((p) => p.transactionId === refund.paymentId)
      .reduce((sum, p) => sum + p.amountInCents, 0);
    const refundable = Math.min(paidByThis, invoice.paidInCents - invoice.refundInCents);
    const amount = Math.min(remaining, refundable);
    if (amount <= 0) continue;
    remaining -= amount;
    const sequence = await tx.invoices.nextSequence(siteId, 'credit_note');
    const subscription = await scope.subscription(invoice.subscriptionId);
    const { snapshot } = await customerSnapshot(scope, subscription);
    const note: CreditNoteRecord = await tx.invoices.insertCreditNote({
      uid: documentUid('cn'),
      siteId,
      subscriptionId: invoice.subscriptionId,
      customerId: invoice.customerId,
      invoiceUid: invoice.uid,
      number: `${invoiceTerms(site).prefix}CN-${sequence}`,
      sequenceNumber: sequence,
      status: 'applied',
      issueDate: localDateString(refund.createdAt, site.timeZone),
      currency: invoice.currency,
      memo: refund.memo,
      seller: sellerOf(site),
      customer: snapshot,
      lineItems: [
        {
          title: `Refund of invoice ${invoice.number}`,
          description: refund.memo,
          quantity: '1',
          unitPriceInCents: amount,
          subtotalInCents: amount,
          taxInCents: 0,
          totalInCents: amount,
          transactionId: refund.id,
        },
      ],
      totalInCents: amount,
      refundTransactionIds: [refund.id],
      createdAt: refund.createdAt,
    });
    book.replace({ ...invoice, refundInCents: invoice.refundInCents + amount, updatedAt: refund.createdAt });
    book.event(invoice.uid, 'refund_invoice', {
      credit_note_uid: note.uid,
      credit_note_number: note.number,
      amount_in_cents: amount,
      transaction_id: refund.id,
      payment_transaction_id: refund.paymentId,
      memo: refund.memo,
    });
    await recordDocumentEvent(tx, {
      siteId,
      key: 'credit_note_created',
      subjectType: 'credit_note',
      subjectId: note.id,
      payload: creditNoteEventPayload(note),
      occurredAt: refund.createdAt,
    });
  }
}

/** Storage's order of a subscription's invoices: numbered ones by number, then drafts, each by id. */
function byNumberThenId(a: InvoiceRecord, b: InvoiceRecord): number {
  const draftA = a.sequenceNumber === null ? 1 : 0;
  const draftB = b.sequenceNumber === null ? 1 : 0;
  if (draftA !== draftB) return draftA - draftB;
  if (a.sequenceNumber !== b.sequenceNumber) return (a.sequenceNumber ?? 0) - (b.sequenceNumber ?? 0);
  return a.id - b.id;
}
