/**
 * The invoice commands (`site.invoices`): reads, void, reopen, external payments, refunds into
 * credit notes, ad-hoc invoices, statements and rendering. Every change of money goes through the
 * ledger (`post()` in `services/posting.ts`), which keeps the invoices in step with it; this
 * service only checks what may be done and names the invoice the lines are about.
 */
import { parseLocalDate } from '../domain/time/index.js';
import { BillingError, invalid, notFound, ValidationCollector } from '../errors.js';
import type { NewTransaction, SiteRecord, StorageTransaction } from '../ports/storage.js';
import { type CommandContext, runCommand } from '../services/command-runner.js';
import type { LedgerService } from '../services/ledger-service.js';
import { settleIfPaid } from '../services/lifecycle-service.js';
import { post } from '../services/posting.js';
import { loadSite } from '../services/site-lookup.js';
import { line, loadSubscription, type SubscriptionDeps } from '../services/subscription-service.js';
import { type DraftLine, insertDraftInvoice } from './issuing.js';
import type {
  AdhocInvoiceInput,
  CreditNoteRecord,
  DocumentRenderExtras,
  InvoiceCustomerChanges,
  InvoiceCustomerSnapshot,
  InvoiceEventRecord,
  InvoiceListQuery,
  InvoicePaymentInput,
  InvoiceRecord,
  InvoiceRefundInput,
  InvoiceStatus,
  InvoicesApi,
  MultiInvoicePaymentInput,
  MultiInvoicePaymentResult,
  StatementRecord,
} from './model.js';
import { computeStatements, statementSubscription } from './statements.js';

const STATUSES: readonly InvoiceStatus[] = ['draft', 'open', 'paid', 'voided', 'canceled'];
const DATE_FIELDS = ['issue_date', 'due_date', 'paid_date', 'created_at', 'updated_at'] as const;
const DEFAULT_PER_PAGE = 20;
const MAX_PER_PAGE = 200;

/**
 * The renderers (`render-pdf.ts`, `render-html.ts`), imported on first use: the PDF library is
 * loaded only by a process that renders. Literal specifiers, so bundlers include the modules.
 */
async function renderers<T>(load: () => Promise<T>, what: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    throw new BillingError('internal', `Invoice rendering is not available: ${what} could not be loaded.`, {
      cause: error,
    });
  }
}

function pageOf(page: number | undefined, perPage: number | undefined, errors: ValidationCollector) {
  const p = page ?? 1;
  const size = perPage ?? DEFAULT_PER_PAGE;
  if (!Number.isSafeInteger(p) || p < 1) errors.add('Page: must be a positive integer.', 'page');
  if (!Number.isSafeInteger(size) || size < 1) errors.add('Per page: must be a positive integer.', 'per_page');
  const limit = Math.min(MAX_PER_PAGE, Math.max(1, Number.isSafeInteger(size) ? size : DEFAULT_PER_PAGE));
  return { offset: (Math.max(1, Number.isSafeInteger(p) ? p : 1) - 1) * limit, limit };
}

function directionOf(direction: string | undefined, errors: ValidationCollector): 'asc' | 'desc' {
  if (direction === undefined) return 'desc';
  if (direction !== 'asc' && direction !== 'desc') errors.add('Direction: must be asc or desc.', 'direction');
  return direction === 'asc' ? 'asc' : 'desc';
}

async function loadInvoice(tx: StorageTransaction, siteId: number, uid: string): Promise<InvoiceRecord> {
  const invoice = typeof uid === 'string' ? await tx.invoices.findByUid(siteId, uid) : undefined;
  if (invoice === undefined) throw notFound('Invoice', uid);
  return invoice;
}

function positiveAmount(value: unknown, errors: ValidationCollector): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    errors.add('Amount: is not a number.', 'amount');
    return 0;
  }
  if (value <= 0) errors.add('Amount: must be greater than 0.', 'amount');
  return value;
}

/** The invoice commands, per site subdomain; `bindInvoices` makes the `InvoicesApi` of one site. */
export class InvoiceService {
  readonly #deps: SubscriptionDeps;
  readonly #ledger: LedgerService;

  constructor(deps: SubscriptionDeps, ledger: LedgerService) {
    this.#deps = deps;
    this.#ledger = ledger;
  }

  #read<T>(work: (ctx: CommandContext) => Promise<T>): Promise<T> {
    return runCommand(this.#deps, work);
  }

  list(subdomain: string, query: InvoiceListQuery = {}): Promise<{ invoices: InvoiceRecord[]; total: number }> {
    return this.#read(async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const errors = new ValidationCollector();
      if (query.status !== undefined && !STATUSES.includes(query.status))
        errors.add('Status: is not included in the list.', 'status');
      const dateField = query.dateField ?? 'issue_date';
      if (!DATE_FIELDS.includes(dateField)) errors.add('Date field: is not included in the list.', 'date_field');
      const from =
        query.startDate === undefined
          ? undefined
          : errors.capture(() => checkDate(query.startDate, site, 'Start date'));
      const to =
        query.endDate === undefined ? undefined : errors.capture(() => checkDate(query.endDate, site, 'End date'));
      const { offset, limit } = pageOf(query.page, query.perPage, errors);
      const direction = directionOf(query.direction, errors);
      errors.throwIfAny();
      const ranged = from !== undefined || to !== undefined;
      const instantField = dateField === 'created_at' || dateField === 'updated_at' ? dateField : undefined;
      return ctx.tx.invoices.list(site.id, {
        ...(query.status === undefined ? {} : { status: query.status }),
        ...(query.subscriptionId === undefined ? {} : { subscriptionId: query.subscriptionId }),
        ...(query.customerId === undefined ? {} : { customerId: query.customerId }),
        ...(query.number === undefined ? {} : { number: query.number }),
        ...(ranged && instantField === undefined
          ? {
              localDates: {
                field: dateField as 'issue_date' | 'due_date' | 'paid_date',
                ...(from === undefined ? {} : { from }),
                ...(to === undefined ? {} : { to }),
              },
            }
          : {}),
        ...(ranged && instantField !== undefined
          ? {
              instants: {
                field: instantField,
                ...(from === undefined ? {} : { from: parseLocalDate(from, site.timeZone) }),
                ...(to === undefined ? {} : { until: nextDayStart(to, site) }),
              },
            }
          : {}),
        direction,
        offset,
        limit,
      });
    });
  }

  get(subdomain: string, uid: string): Promise<InvoiceRecord> {
    return this.#read(async (ctx) => loadInvoice(ctx.tx, (await loadSite(ctx.tx, subdomain)).id, uid));
  }

  events(subdomain: string, uid: string): Promise<InvoiceEventRecord[]> {
    return this.#read(async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const invoice = await loadInvoice(ctx.tx, site.id, uid);
      return ctx.tx.invoices.listEvents(site.id, invoice.uid);
    });
  }

  /**
   * Voids an open invoice that has no payments: its line items and discounts are reversed on the
   * ledger (adjustments of kind `invoice_void`), and a credit it held goes back to the
   * subscription, to be applied to its other open invoices.
   */
  void(subdomain: string, uid: string, reason: string): Promise<InvoiceRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const invoice = await loadInvoice(ctx.tx, site.id, uid);
      if (typeof reason !== 'string' || reason.trim() === '') throw invalid('Reason: cannot be blank.', 'reason');
      if (invoice.status === 'draft') {
        // Nothing of a draft is on the ledger: it is voided as it stands, without a number.
        const voided = { ...invoice, status: 'voided' as const, dueInCents: 0, updatedAt: ctx.now };
        await ctx.tx.invoices.update(voided);
        await ctx.tx.invoices.appendEvent(site.id, {
          invoiceUid: invoice.uid,
          eventType: 'void_invoice',
          data: { reason: reason.trim(), credits_returned_in_cents: 0 },
          createdAt: ctx.now,
        });
        return loadInvoice(ctx.tx, site.id, uid);
      }
      if (invoice.status !== 'open') throw invalid(`Invoice: a ${invoice.status} invoice cannot be voided.`);
      if (invoice.paidInCents > 0)
        throw invalid('Invoice: an invoice with payments cannot be voided; refund the payments first.');
      const subscription = await loadSubscription(ctx.tx, site.id, invoice.subscriptionId);
      const memo = `Void of invoice ${invoice.number}: ${reason.trim()}`;
      await post(ctx.tx, reversal(invoice, subscription, 'invoice_void', -1, memo, ctx.now), {
        invoice: false,
        voidInvoiceUid: invoice.uid,
        reason: reason.trim(),
      });
      return loadInvoice(ctx.tx, site.id, uid);
    });
  }

  /** Reopens a voided invoice: its lines are posted again and it is due again, less any credit. */
  reopen(subdomain: string, uid: string): Promise<InvoiceRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const invoice = await loadInvoice(ctx.tx, site.id, uid);
      if (invoice.status !== 'voided') throw invalid(`Invoice: a ${invoice.status} invoice cannot be reopened.`);
      if (invoice.number === null) throw invalid('Invoice: a voided draft cannot be reopened; create a new invoice.');
      const subscription = await loadSubscription(ctx.tx, site.id, invoice.subscriptionId);
      if (subscription.state === 'cancelled' || subscription.state === 'expired')
        throw invalid('Invoice: the subscription is closed; its invoices cannot be reopened.');
      // A voided advance invoice (issued before its period began): the renewal bills that period
      // in full unless an advance invoice is recorded for it, so reopening one would bill it twice.
      const advance =
        invoice.periodIndex !== null &&
        (invoice.periodIndex > subscription.periodIndex ||
          (invoice.periodIndex === subscription.periodIndex &&
            invoice.createdAt.getTime() < subscription.currentPeriodStartedAt.getTime()));
      if (advance)
        throw invalid('Invoice: a voided advance invoice cannot be reopened; issue a new advance invoice instead.');
      const memo = `Reopen of invoice ${invoice.number}`;
      await post(ctx.tx, reversal(invoice, subscription, 'invoice_reopen', 1, memo, ctx.now), {
        invoice: false,
        reopenInvoiceUid: invoice.uid,
      });
      return loadInvoice(ctx.tx, site.id, uid);
    });
  }

  /**
   * Issues a draft: its lines are posted to the ledger as `adhoc` charges (through `post()`, which
   * turns the draft into the invoice of those lines with the site's next number), and it is open,
   * or paid when the subscription's credit covers it.
   */
  issue(subdomain: string, uid: string): Promise<InvoiceRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const invoice = await loadInvoice(ctx.tx, site.id, uid);
      if (invoice.status !== 'draft')
        throw invalid(`Invoice: a ${invoice.status} invoice cannot be issued; only drafts can.`);
      const subscription = await loadSubscription(ctx.tx, site.id, invoice.subscriptionId);
      if (subscription.state === 'cancelled' || subscription.state === 'expired')
        throw invalid('This subscription is not eligible to accept charges.');
      const lines = invoice.lineItems.map((item) =>
        line(subscription, 'charge', 'adhoc', item.totalInCents, item.title, ctx.now),
      );
      await post(ctx.tx, lines, { role: 'adhoc', memo: invoice.memo, issueDraftUid: invoice.uid });
      return loadInvoice(ctx.tx, site.id, uid);
    });
  }

  /** Deletes a draft; nothing of it is on the ledger. Only drafts can be deleted. */
  deleteDraft(subdomain: string, uid: string): Promise<void> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const invoice = await loadInvoice(ctx.tx, site.id, uid);
      if (invoice.status !== 'draft')
        throw invalid(`Invoice: a ${invoice.status} invoice cannot be deleted; only drafts can.`);
      if (!(await ctx.tx.invoices.deleteDraft(site.id, invoice.id)))
        throw new BillingError('internal', `The draft invoice ${invoice.uid} could not be deleted.`);
    });
  }

  /**
   * Pays an open invoice: `external` (the default) records money received outside the gateway (a
   * `manual` payment line); `payment` charges the subscription's card through the one collection
   * path (the ledger's `payInvoice`: attempt committed, gateway called outside any transaction,
   * outcome committed), and a decline rejects with `payment_declined` and leaves the invoice as it
   * was. Either way the payment pays this invoice, never more than its due amount.
   */
  async recordPayment(subdomain: string, uid: string, input: InvoicePaymentInput): Promise<InvoiceRecord> {
    const method = input?.method ?? 'external';
    const checked = await runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const invoice = await loadInvoice(ctx.tx, site.id, uid);
      const errors = new ValidationCollector();
      const amount = positiveAmount(input?.amountInCents, errors);
      if (method !== 'external' && method !== 'payment')
        errors.add("Method: must be 'external' or 'payment'.", 'method');
      if (input?.memo !== undefined && typeof input.memo !== 'string') errors.add('Memo: must be a string.', 'memo');
      errors.throwIfAny();
      if (invoice.status !== 'open') throw invalid(`Invoice: a ${invoice.status} invoice cannot take payments.`);
      if (amount > invoice.dueInCents) throw invalid("Amount: cannot exceed the invoice's due amount.", 'amount');
      const memo = input.memo ?? `Payment for invoice ${invoice.number}`;
      if (method === 'external') {
        const subscription = await loadSubscription(ctx.tx, site.id, invoice.subscriptionId);
        await post(ctx.tx, [line(subscription, 'payment', 'manual', amount, memo, ctx.now, { success: true })], {
          payInvoiceUid: invoice.uid,
        });
      }
      return { invoice, amount, memo };
    });
    if (method === 'payment') {
      await this.#ledger.payInvoice(subdomain, checked.invoice.subscriptionId, {
        invoiceUid: checked.invoice.uid,
        amountInCents: checked.amount,
        memo: checked.memo,
      });
    }
    return this.get(subdomain, uid);
  }

  /**
   * One external payment spread across several open invoices of one customer, all or nothing: the
   * amount must equal the sum of the applications, each invoice must be open and owe at least what
   * is applied to it (applications to one invoice add up). Each application posts a `manual`
   * payment line that pays its invoice, all in one transaction, so a refused application leaves
   * every invoice as it was.
   */
  recordMultiplePayment(subdomain: string, input: MultiInvoicePaymentInput): Promise<MultiInvoicePaymentResult> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const errors = new ValidationCollector();
      const total = positiveAmount(input?.amountInCents, errors);
      const applications = Array.isArray(input?.applications) ? input.applications : [];
      if (applications.length === 0) errors.add('Applications: cannot be blank.', 'applications');
      let sum = 0;
      const wanted = new Map<string, number>();
      for (const [i, application] of applications.entries()) {
        const amount = application.amountInCents;
        if (!Number.isSafeInteger(amount) || amount <= 0) {
          errors.add(`Applications: amount of application ${i + 1} must be greater than 0.`, 'applications');
          continue;
        }
        sum += amount;
        wanted.set(application.invoiceUid, (wanted.get(application.invoiceUid) ?? 0) + amount);
      }
      if (input?.memo !== undefined && typeof input.memo !== 'string') errors.add('Memo: must be a string.', 'memo');
      errors.throwIfAny();
      if (sum !== total) throw invalid('Amount: must equal the sum of the applications.', 'amount');
      const invoices = new Map<string, InvoiceRecord>();
      let customerId: number | undefined;
      for (const [uid, amount] of wanted) {
        const invoice = await ctx.tx.invoices.findByUid(site.id, uid);
        if (invoice === undefined) {
          errors.add(`Applications: invoice ${uid} was not found.`, 'applications');
          continue;
        }
        invoices.set(uid, invoice);
        if (invoice.status !== 'open') {
          errors.add(`Applications: invoice ${uid} is ${invoice.status} and cannot take payments.`, 'applications');
        } else if (amount > invoice.dueInCents) {
          errors.add(`Applications: the amount applied to invoice ${uid} exceeds its due amount.`, 'applications');
        }
        customerId ??= invoice.customerId;
        if (invoice.customerId !== customerId) {
          errors.add('Applications: every invoice must belong to the same customer.', 'applications');
        }
      }
      errors.throwIfAny();
      const recorded: MultiInvoicePaymentResult['applications'][number][] = [];
      for (const application of applications) {
        const invoice = invoices.get(application.invoiceUid)!;
        const subscription = await loadSubscription(ctx.tx, site.id, invoice.subscriptionId);
        const memo = input.memo ?? `Payment for invoice ${invoice.number}`;
        const [written] = await post(
          ctx.tx,
          [line(subscription, 'payment', 'manual', application.amountInCents, memo, ctx.now, { success: true })],
          { payInvoiceUid: invoice.uid },
        );
        recorded.push({
          invoiceUid: invoice.uid,
          amountInCents: application.amountInCents,
          transactionId: written!.id,
        });
      }
      for (const subscriptionId of new Set([...invoices.values()].map((i) => i.subscriptionId))) {
        await settleIfPaid(ctx, site.id, subscriptionId);
      }
      return { totalInCents: total, currency: site.currency, applications: recorded };
    });
  }

  /** What refreshing an open invoice's customer snapshot would change; nothing is written. */
  previewCustomerInformation(subdomain: string, uid: string): Promise<InvoiceCustomerChanges> {
    return this.#read(async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const invoice = await loadOpenForCustomerChange(ctx.tx, site.id, uid);
      return customerChanges(invoice.customer, await currentSnapshot(ctx.tx, invoice));
    });
  }

  /**
   * Refreshes an open invoice's customer snapshot from the customer record (and the card's billing
   * address, as issuing takes it). Paid and voided invoices keep the snapshot they were settled with.
   */
  updateCustomerInformation(subdomain: string, uid: string): Promise<InvoiceRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const invoice = await loadOpenForCustomerChange(ctx.tx, site.id, uid);
      const snapshot = await currentSnapshot(ctx.tx, invoice);
      const changes = customerChanges(invoice.customer, snapshot);
      if (changes.payer === null && changes.billingAddress === null) return invoice;
      const updated = await ctx.tx.invoices.update({ ...invoice, customer: snapshot, updatedAt: ctx.now });
      if (updated === undefined) throw notFound('Invoice', uid);
      return updated;
    });
  }

  /**
   * Refunds money paid on an invoice through the ledger's refund (the gateway's for a gateway
   * payment, an external refund otherwise), which issues the credit note. Never more than the
   * invoice's paid amount less what was refunded, nor more than the chosen payment paid on it.
   */
  async refund(
    subdomain: string,
    uid: string,
    input: InvoiceRefundInput,
  ): Promise<{ invoice: InvoiceRecord; creditNote: CreditNoteRecord }> {
    const checked = await this.#read(async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const invoice = await loadInvoice(ctx.tx, site.id, uid);
      const errors = new ValidationCollector();
      const amount = positiveAmount(input?.amountInCents, errors);
      if (typeof input?.memo !== 'string' || input.memo.trim() === '') errors.add('Memo: cannot be blank.', 'memo');
      errors.throwIfAny();
      const payments = invoice.payments.filter((p) => p.method !== 'credit');
      const chosen =
        input.paymentTransactionId === undefined
          ? payments.at(-1)
          : payments.find((p) => p.transactionId === input.paymentTransactionId);
      if (chosen === undefined) throw invalid('Payment: the invoice has no such payment.', 'payment_id');
      const paidByChosen = payments
        .filter((p) => p.transactionId === chosen.transactionId)
        .reduce((sum, p) => sum + p.amountInCents, 0);
      const refundable = Math.min(invoice.paidInCents - invoice.refundInCents, paidByChosen);
      if (amount > refundable)
        throw invalid('Amount: cannot exceed the amount paid on the invoice less its refunds.', 'amount');
      return { invoice, paymentId: chosen.transactionId, external: chosen.gatewayTransactionId === null };
    });
    await this.#ledger.refund(subdomain, checked.invoice.subscriptionId, {
      paymentId: checked.paymentId,
      amountInCents: input.amountInCents,
      memo: input.memo,
      external: checked.external,
      invoiceUid: checked.invoice.uid,
    });
    return this.#read(async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const invoice = await loadInvoice(ctx.tx, site.id, uid);
      const { creditNotes } = await ctx.tx.invoices.listCreditNotes(site.id, {
        invoiceUid: invoice.uid,
        direction: 'desc',
        offset: 0,
        limit: 1,
      });
      if (creditNotes[0] === undefined)
        throw new BillingError('internal', `The refund of invoice ${invoice.number} issued no credit note.`);
      return { invoice, creditNote: creditNotes[0] };
    });
  }

  /**
   * An invoice of lines the merchant bills now: each line a `charge` of kind `adhoc`, issued open;
   * or, with `status: 'draft'`, a draft kept off the ledger and without a number until `issue`.
   */
  createAdhoc(subdomain: string, subscriptionId: number, input: AdhocInvoiceInput): Promise<InvoiceRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      const errors = new ValidationCollector();
      const items = Array.isArray(input?.lineItems) ? input.lineItems : [];
      if (items.length === 0) errors.add('Line items: at least one is required.', 'line_items');
      const lines: NewTransaction[] = [];
      const drafted: DraftLine[] = [];
      const status = input?.status ?? 'open';
      if (status !== 'open' && status !== 'draft') errors.add("Status: must be 'open' or 'draft'.", 'status');
      items.forEach((item, index) => {
        const at = `line_items[${index}]`;
        if (typeof item?.title !== 'string' || item.title.trim() === '')
          errors.add(`Line item ${index + 1} title: cannot be blank.`, `${at}.title`);
        const quantity = item?.quantity ?? '1';
        if (typeof quantity !== 'string' || !/^\d+$/.test(quantity) || Number(quantity) < 1)
          errors.add(`Line item ${index + 1} quantity: must be a positive whole number.`, `${at}.quantity`);
        if (!Number.isSafeInteger(item?.unitPriceInCents) || item.unitPriceInCents < 0)
          errors.add(`Line item ${index + 1} unit price: must be a non-negative amount.`, `${at}.unit_price`);
        else if (typeof quantity === 'string' && /^\d+$/.test(quantity)) {
          const total = item.unitPriceInCents * Number(quantity);
          if (!Number.isSafeInteger(total))
            errors.add(`Line item ${index + 1}: the amount is too large.`, `${at}.unit_price`);
          else if (typeof item.title === 'string' && item.title.trim() !== '') {
            lines.push(line(subscription, 'charge', 'adhoc', total, item.title.trim(), ctx.now));
            drafted.push({
              title: item.title.trim(),
              description: typeof item.description === 'string' ? item.description : 'adhoc',
              quantity,
              unitPriceInCents: item.unitPriceInCents,
              totalInCents: total,
            });
          }
        }
      });
      if (input?.netTerms !== undefined && (!Number.isSafeInteger(input.netTerms) || input.netTerms < 0))
        errors.add('Net terms: must be a non-negative whole number of days.', 'net_terms');
      if (subscription.state === 'cancelled' || subscription.state === 'expired')
        errors.add('This subscription is not eligible to accept charges.');
      if (input?.memo !== undefined && typeof input.memo !== 'string') errors.add('Memo: must be a string.', 'memo');
      errors.throwIfAny();
      const netTerms = input.netTerms === undefined ? {} : { netTermsDays: input.netTerms };
      if (status === 'draft')
        return insertDraftInvoice(
          ctx.tx,
          site,
          subscription,
          { lines: drafted, memo: input.memo ?? '', ...netTerms },
          ctx.now,
        );
      const written = await post(ctx.tx, lines, { role: 'adhoc', memo: input.memo ?? '', ...netTerms });
      const invoices = await ctx.tx.invoices.listForSubscription(site.id, subscription.id);
      const issued = invoices.find((i) => i.lineItems.some((item) => item.transactionId === written[0]!.id));
      if (issued === undefined) throw new BillingError('internal', 'The ad-hoc invoice was not issued.');
      return issued;
    });
  }

  listCreditNotes(
    subdomain: string,
    query: Parameters<InvoicesApi['listCreditNotes']>[0] = {},
  ): Promise<{ creditNotes: CreditNoteRecord[]; total: number }> {
    return this.#read(async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const errors = new ValidationCollector();
      const { offset, limit } = pageOf(query.page, query.perPage, errors);
      const direction = directionOf(query.direction, errors);
      errors.throwIfAny();
      return ctx.tx.invoices.listCreditNotes(site.id, {
        ...(query.subscriptionId === undefined ? {} : { subscriptionId: query.subscriptionId }),
        direction,
        offset,
        limit,
      });
    });
  }

  getCreditNote(subdomain: string, uid: string): Promise<CreditNoteRecord> {
    return this.#read(async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const note = typeof uid === 'string' ? await ctx.tx.invoices.findCreditNoteByUid(site.id, uid) : undefined;
      if (note === undefined) throw notFound('Credit note', uid);
      return note;
    });
  }

  statements(subdomain: string, subscriptionId: number): Promise<StatementRecord[]> {
    return this.#read(async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      const lines = await ctx.tx.ledger.listForSubscription(site.id, subscription.id);
      const invoices = await ctx.tx.invoices.listForSubscription(site.id, subscription.id);
      return computeStatements(subscription, lines, invoices);
    });
  }

  statement(subdomain: string, id: number): Promise<StatementRecord> {
    return this.#read(async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const subscriptionId = statementSubscription(id);
      const subscription =
        subscriptionId === undefined ? undefined : await ctx.tx.subscriptions.findById(site.id, subscriptionId);
      if (subscription === undefined) throw notFound('Statement', id);
      const lines = await ctx.tx.ledger.listForSubscription(site.id, subscription.id);
      const invoices = await ctx.tx.invoices.listForSubscription(site.id, subscription.id);
      const found = computeStatements(subscription, lines, invoices).find((s) => s.id === id);
      if (found === undefined) throw notFound('Statement', id);
      return found;
    });
  }

  /** The metafields shown on a subscription's documents and the site zone. */
  async #extras(tx: StorageTransaction, site: SiteRecord, subscriptionId: number, customerId: number) {
    const metafields: { name: string; value: string }[] = [];
    for (const [resourceType, resourceId] of [
      ['customer', customerId],
      ['subscription', subscriptionId],
    ] as const) {
      const shown = new Set(
        (await tx.metafields.listFields(site.id, resourceType)).filter((f) => f.scope.invoices).map((f) => f.name),
      );
      for (const value of await tx.metafields.listValues(site.id, resourceType, resourceId))
        if (shown.has(value.name)) metafields.push({ name: value.name, value: value.value });
    }
    return { metafields, timeZone: site.timeZone } satisfies DocumentRenderExtras;
  }

  async render(subdomain: string, uid: string, format: 'pdf' | 'html'): Promise<Uint8Array | string> {
    const { invoice, extras } = await this.#read(async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const invoice = await loadInvoice(ctx.tx, site.id, uid);
      return { invoice, extras: await this.#extras(ctx.tx, site, invoice.subscriptionId, invoice.customerId) };
    });
    if (format === 'pdf')
      return (await renderers(() => import('./render-pdf.js'), 'the PDF renderer')).renderInvoicePdf(invoice, extras);
    if (format === 'html')
      return (await renderers(() => import('./render-html.js'), 'the HTML renderer')).renderInvoiceHtml(
        invoice,
        extras,
      );
    throw invalid('Format: must be pdf or html.', 'format');
  }

  async renderCreditNote(subdomain: string, uid: string, format: 'pdf'): Promise<Uint8Array> {
    if (format !== 'pdf') throw invalid('Format: must be pdf.', 'format');
    const note = await this.getCreditNote(subdomain, uid);
    const extras = await this.#read(async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      return this.#extras(ctx.tx, site, note.subscriptionId, note.customerId);
    });
    return (await renderers(() => import('./render-pdf.js'), 'the PDF renderer')).renderCreditNotePdf(note, extras);
  }
}

/** The `site.invoices` of one site. */
export function bindInvoices(service: InvoiceService, subdomain: string): InvoicesApi {
  return {
    list: (query) => service.list(subdomain, query),
    get: (uid) => service.get(subdomain, uid),
    events: (uid) => service.events(subdomain, uid),
    void: (uid, reason) => service.void(subdomain, uid, reason),
    recordPayment: (uid, input) => service.recordPayment(subdomain, uid, input),
    recordMultiplePayment: (input) => service.recordMultiplePayment(subdomain, input),
    previewCustomerInformation: (uid) => service.previewCustomerInformation(subdomain, uid),
    updateCustomerInformation: (uid) => service.updateCustomerInformation(subdomain, uid),
    refund: (uid, input) => service.refund(subdomain, uid, input),
    reopen: (uid) => service.reopen(subdomain, uid),
    issue: (uid) => service.issue(subdomain, uid),
    deleteDraft: (uid) => service.deleteDraft(subdomain, uid),
    createAdhoc: (subscriptionId, input) => service.createAdhoc(subdomain, subscriptionId, input),
    listCreditNotes: (query) => service.listCreditNotes(subdomain, query),
    getCreditNote: (uid) => service.getCreditNote(subdomain, uid),
    statements: (subscriptionId) => service.statements(subdomain, subscriptionId),
    statement: (id) => service.statement(subdomain, id),
    render: ((uid: string, format: 'pdf' | 'html') => service.render(subdomain, uid, format)) as InvoicesApi['render'],
    renderCreditNote: (uid, format) => service.renderCreditNote(subdomain, uid, format),
  };
}

/** The ledger lines that take an invoice's items and discounts off the balance (`sign` -1) or put them back (+1). */
function reversal(
  invoice: InvoiceRecord,
  subscription: Parameters<typeof line>[0],
  kind: 'invoice_void' | 'invoice_reopen',
  sign: 1 | -1,
  memo: string,
  now: Date,
): NewTransaction[] {
  const lines: NewTransaction[] = [];
  for (const item of invoice.lineItems)
    if (item.totalInCents !== 0)
      lines.push(line(subscription, 'adjustment', kind, sign * item.totalInCents, `${memo} (${item.title})`, now));
  for (const discount of invoice.discounts)
    if (discount.amountInCents !== 0)
      lines.push(
        line(subscription, 'adjustment', kind, -sign * discount.amountInCents, `${memo} (${discount.title})`, now),
      );
  return lines;
}

/** Checks a `YYYY-MM-DD` filter date in the site zone and returns it. */
function checkDate(value: unknown, site: SiteRecord, label: string): string {
  parseLocalDate(value, site.timeZone, label);
  return value as string;
}

/** The first instant of the day after `date` in the site zone. */
function nextDayStart(date: string, site: SiteRecord): Date {
  const next = new Date(`${date}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return parseLocalDate(next.toISOString().slice(0, 10), site.timeZone);
}

/** An invoice whose customer snapshot may change: open or draft; `not_found` or 422 otherwise. */
async function loadOpenForCustomerChange(tx: StorageTransaction, siteId: number, uid: string): Promise<InvoiceRecord> {
  const invoice = await loadInvoice(tx, siteId, uid);
  if (invoice.status !== 'open' && invoice.status !== 'draft') {
    throw invalid(`Invoice: the customer information of a ${invoice.status} invoice cannot change.`);
  }
  return invoice;
}

/**
 * The customer snapshot a new invoice of this subscription would take now: the customer's
 * fields, and the card's billing address when it has one, else the customer's (the same rule as
 * issuing, in `issuing.ts`).
 */
async function currentSnapshot(tx: StorageTransaction, invoice: InvoiceRecord): Promise<InvoiceCustomerSnapshot> {
  const customer = await tx.customers.findById(invoice.siteId, invoice.customer.customerId);
  if (customer === undefined) throw notFound('Customer', invoice.customer.customerId);
  const subscription = await tx.subscriptions.findById(invoice.siteId, invoice.subscriptionId);
  const profile =
    subscription?.paymentProfileId == null
      ? undefined
      : await tx.customers.findPaymentProfile(invoice.siteId, subscription.paymentProfileId);
  const cardAddress = profile?.billingAddress;
  const hasCardAddress = cardAddress !== undefined && Object.values(cardAddress).some((v) => v !== null && v !== '');
  return {
    customerId: customer.id,
    firstName: customer.firstName,
    lastName: customer.lastName,
    organization: customer.organization,
    email: customer.email,
    reference: customer.reference,
    billingAddress: hasCardAddress ? cardAddress : customer.address,
  };
}

function customerChanges(before: InvoiceCustomerSnapshot, after: InvoiceCustomerSnapshot): InvoiceCustomerChanges {
  const payerKeys = ['firstName', 'lastName', 'organization', 'email', 'reference'] as const;
  const addressKeys = ['address', 'address2', 'city', 'state', 'zip', 'country'] as const;
  const payerChanged = payerKeys.some((k) => before[k] !== after[k]);
  const addressChanged = addressKeys.some(
    (k) => (before.billingAddress[k] ?? null) !== (after.billingAddress[k] ?? null),
  );
  return {
    payer: payerChanged ? { before, after } : null,
    billingAddress: addressChanged ? { before: before.billingAddress, after: after.billingAddress } : null,
  };
}
