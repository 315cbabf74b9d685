/**
 * Advance invoices (issue #19; the SDK's `AdvanceInvoiceController`): a subscription's next period
 * billed now, before its renewal. Issuing posts the in-advance charges the renewal would bill for
 * the next period (baseline, quantity and on/off components, their coupons' discounts; one
 * assessment, `assessNextPeriod`) through the one posting place, which issues the invoice, and
 * records in the subscription's data which period and invoice it is for. Nothing is collected at
 * issue: under automatic collection the renewal's collection takes the subscription's balance,
 * the advance invoice's due amount included. The renewal into that period bills only the
 * difference between its assessment and what the advance invoice billed ({@link afterAdvance}),
 * so nothing is billed twice and a change in between is billed or credited as a difference.
 * A voided advance invoice (through this service or the invoice's own void) counts as none, so
 * the renewal bills the full period again. See docs/decisions.md, "Advance invoices".
 */
import { BillingError, invalid, notFound } from '../errors.js';
import type { InvoiceRecord } from '../invoices/model.js';
import type {
  NewTransaction,
  SiteRecord,
  StorageTransaction,
  SubscriptionRecord,
  SubscriptionState,
} from '../ports/storage.js';
import { type CommandContext, runCommand } from './command-runner.js';
import { type AssessedCharge, assessNextPeriod, type PeriodAssessment } from './period-assessment.js';
import { post } from './posting.js';
import { runRead } from './read-runner.js';
import { loadSite, loadSubscription } from './site-lookup.js';
import { couponDiscounts, line, type SubscriptionDeps } from './subscription-service.js';

/** The subscription data key of its advance invoice ({@link AdvanceInvoiceNote}). */
export const ADVANCE_INVOICE_KEY = 'advanceInvoice';

/** What a subscription's data keeps of its advance invoice: the period, the invoice and what it billed. */
export interface AdvanceInvoiceNote {
  readonly periodIndex: number;
  readonly invoiceUid: string;
  /** The in-advance charges it billed, as assessed (kind, component, amount, memo). */
  readonly charges: readonly {
    readonly kind: string;
    readonly componentId: number | null;
    readonly amountInCents: number;
    readonly memo: string;
  }[];
  /** Its coupon discounts (negative amounts), by code. */
  readonly discounts: readonly { readonly code: string; readonly amountInCents: number; readonly memo: string }[];
}

/** What `issue` takes: `force` voids an existing advance invoice and issues a new one. */
export interface IssueAdvanceInvoiceInput {
  readonly force?: boolean;
}

/** States an advance invoice may be issued in: live and renewing, not on trial. */
const ISSUABLE: readonly SubscriptionState[] = ['active', 'past_due', 'soft_failure', 'unpaid'];

/** Kinds billed in advance for a period; metered usage is billed in arrears at the renewal. */
const IN_ADVANCE: ReadonlySet<string> = new Set(['baseline', 'quantity_based_component', 'on_off_component']);

/** The method names a site handle exposes. */
export const ADVANCE_INVOICE_METHODS = ['issue', 'read', 'void'] as const;

/** Issues, reads and voids subscriptions' advance invoices. */
export class AdvanceInvoiceService {
  readonly #deps: SubscriptionDeps;

  constructor(deps: SubscriptionDeps) {
    this.#deps = deps;
  }

  /**
   * Issues the advance invoice of the subscription's next period (open, not collected; paid at
   * once when the subscription's credit covers it). Refused (422) for a subscription that is not
   * active (or in dunning), on trial, canceling at the end of its period or expiring by then, and
   * when the next period already has an advance invoice, unless `force` (which voids it first; a
   * paid one cannot be replaced).
   */
  issue(subdomain: string, subscriptionId: number, input: IssueAdvanceInvoiceInput = {}): Promise<InvoiceRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      const force = input?.force ?? false;
      if (typeof force !== 'boolean') throw invalid('Force: must be true or false.', 'force');
      if (subscription.state === 'trialing')
        throw invalid('Subscription: an advance invoice cannot be issued for a subscription on trial.');
      if (!ISSUABLE.includes(subscription.state))
        throw invalid(`Subscription: an advance invoice cannot be issued for a ${subscription.state} subscription.`);
      if (subscription.cancelAtEndOfPeriod)
        throw invalid('Subscription: it is canceled at the end of its period; there is no next period to invoice.');
      if (
        subscription.expiresAt !== null &&
        subscription.expiresAt.getTime() <= subscription.currentPeriodEndsAt.getTime()
      )
        throw invalid('Subscription: it expires before its next period; there is no next period to invoice.');
      const existing = await advanceInvoiceOf(ctx.tx, subscription, subscription.periodIndex + 1);
      if (existing !== undefined) {
        if (!force)
          throw invalid(
            'Subscription: an advance invoice already exists for the next billing period; pass force: true to replace it.',
          );
        if (existing.invoice.status !== 'open' || existing.invoice.paidInCents > 0)
          throw invalid(`Advance invoice: a ${paidOrStatus(existing.invoice)} advance invoice cannot be replaced.`);
        await voidLines(ctx, subscription, existing.invoice, 'Replaced by a new advance invoice');
      }
      const version = await ctx.tx.catalog.findProductVersion(
        site.id,
        subscription.productId,
        subscription.productVersion,
      );
      if (!version)
        throw new BillingError('storage', `Subscription ${subscription.id} refers to a missing product version.`);
      const assessment = await assessNextPeriod(ctx, site, subscription, version.terms, { resetMetered: false });
      const charges = assessment.charges.filter((c) => IN_ADVANCE.has(c.kind));
      const discounts = couponDiscounts(charges, assessment.coupons);
      const { period } = assessment;
      const lines: NewTransaction[] = charges.map((c) =>
        line(subscription, 'charge', c.kind, c.amountInCents, c.memo, ctx.now, {
          periodIndex: period.index,
          componentId: c.componentId,
        }),
      );
      for (const d of discounts)
        lines.push(
          line(subscription, 'adjustment', 'coupon', d.amountInCents, d.memo, ctx.now, { periodIndex: period.index }),
        );
      // The version guard first: of concurrent issues only one writes (the others are conflicts).
      const note: Omit<AdvanceInvoiceNote, 'invoiceUid'> = {
        periodIndex: period.index,
        charges: charges.map((c) => ({
          kind: c.kind,
          componentId: c.componentId,
          amountInCents: c.amountInCents,
          memo: c.memo,
        })),
        discounts: discounts.map((d) => ({ code: d.code, amountInCents: d.amountInCents, memo: d.memo })),
      };
      const moved = await ctx.tx.subscriptions.updateAtVersion(site.id, subscription.id, subscription.version, {
        data: { ...subscription.data, [ADVANCE_INVOICE_KEY]: { ...note, invoiceUid: '' } },
        updatedAt: ctx.now,
      });
      if (!moved)
        throw new BillingError(
          'conflict',
          'The subscription was changed by another request; nothing was issued. Try again.',
        );
      const dates = `${period.start.toISOString().slice(0, 10)} - ${period.end.toISOString().slice(0, 10)}`;
      const written = await post(ctx.tx, lines, { role: 'renewal', memo: `Advance invoice for the period ${dates}` });
      const invoice = await invoiceOfLine(ctx.tx, site, subscription.id, written[0]!.id);
      const recorded = await ctx.tx.subscriptions.updateAtVersion(site.id, subscription.id, moved.version, {
        data: { ...subscription.data, [ADVANCE_INVOICE_KEY]: { ...note, invoiceUid: invoice.uid } },
        updatedAt: ctx.now,
      });
      if (!recorded)
        throw new BillingError(
          'conflict',
          'The subscription was changed by another request; nothing was issued. Try again.',
        );
      return invoice;
    });
  }

  /** The advance invoice of the subscription's next period; `not_found` when there is none (or it was voided). */
  read(subdomain: string, subscriptionId: number): Promise<InvoiceRecord> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const subscription = await loadSubscription(tx, site.id, subscriptionId);
      const found = await advanceInvoiceOf(tx, subscription, subscription.periodIndex + 1);
      if (found === undefined) throw notFound('Advance invoice');
      return found.invoice;
    });
  }

  /**
   * Voids the advance invoice of the subscription's next period: it must be open with no payments
   * (a credit applied to it goes back to the subscription). Its lines are reversed on the ledger
   * and the record is cleared, so the renewal bills the full period; a new one may be issued.
   */
  void(subdomain: string, subscriptionId: number, reason: string): Promise<InvoiceRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      if (typeof reason !== 'string' || reason.trim() === '') throw invalid('Reason: cannot be blank.', 'reason');
      const found = await advanceInvoiceOf(ctx.tx, subscription, subscription.periodIndex + 1);
      if (found === undefined) throw notFound('Advance invoice');
      if (found.invoice.status !== 'open' || found.invoice.paidInCents > 0)
        throw invalid(`Invoice: a ${paidOrStatus(found.invoice)} invoice cannot be voided.`);
      const moved = await ctx.tx.subscriptions.updateAtVersion(site.id, subscription.id, subscription.version, {
        data: withoutAdvanceInvoice(subscription.data),
        updatedAt: ctx.now,
      });
      if (!moved)
        throw new BillingError(
          'conflict',
          'The subscription was changed by another request; nothing was voided. Try again.',
        );
      await voidLines(ctx, subscription, found.invoice, reason.trim());
      const voided = await ctx.tx.invoices.findByUid(site.id, found.invoice.uid);
      if (!voided) throw new BillingError('storage', `Invoice ${found.invoice.uid} vanished while voiding.`);
      return voided;
    });
  }
}

/** `paid`, or `partially paid`, or the invoice's status. */
function paidOrStatus(invoice: InvoiceRecord): string {
  if (invoice.status === 'open' && invoice.paidInCents > 0) return 'partially paid';
  return invoice.status;
}

/** The subscription's advance-invoice note, when its data holds a well-formed one. */
export function advanceInvoiceNote(data: Readonly<Record<string, unknown>>): AdvanceInvoiceNote | undefined {
  const note = data[ADVANCE_INVOICE_KEY] as Partial<AdvanceInvoiceNote> | undefined;
  if (note === null || typeof note !== 'object') return undefined;
  if (typeof note.periodIndex !== 'number' || typeof note.invoiceUid !== 'string' || note.invoiceUid === '')
    return undefined;
  if (!Array.isArray(note.charges) || !Array.isArray(note.discounts)) return undefined;
  return note as AdvanceInvoiceNote;
}

/** The subscription's data without its advance-invoice note. */
export function withoutAdvanceInvoice(data: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { [ADVANCE_INVOICE_KEY]: _gone, ...rest } = data;
  return rest;
}

/**
 * The advance invoice that bills period `periodIndex` of the subscription and what it billed: the
 * note in its data, when it is for that period and its invoice was not voided since (by this
 * service or by the invoice's own void).
 */
export async function advanceInvoiceOf(
  tx: StorageTransaction,
  subscription: SubscriptionRecord,
  periodIndex: number,
): Promise<{ note: AdvanceInvoiceNote; invoice: InvoiceRecord } | undefined> {
  const note = advanceInvoiceNote(subscription.data);
  if (note === undefined || note.periodIndex !== periodIndex) return undefined;
  const invoice = await tx.invoices.findByUid(subscription.siteId, note.invoiceUid);
  if (invoice === undefined || invoice.status === 'voided' || invoice.subscriptionId !== subscription.id)
    return undefined;
  return { note, invoice };
}

/** The invoice a posted line is on (the post that wrote it just issued it). */
async function invoiceOfLine(
  tx: StorageTransaction,
  site: SiteRecord,
  subscriptionId: number,
  transactionId: number,
): Promise<InvoiceRecord> {
  const open = await tx.invoices.listForSubscription(site.id, subscriptionId, 'open');
  const paid = open.some((i) => i.lineItems.some((item) => item.transactionId === transactionId))
    ? []
    : await tx.invoices.listForSubscription(site.id, subscriptionId, 'paid');
  const invoice = [...open, ...paid].find((i) => i.lineItems.some((item) => item.transactionId === transactionId));
  if (invoice === undefined) throw new BillingError('internal', 'The advance invoice was not issued with its lines.');
  return invoice;
}

/**
 * Voids an open invoice by reversing its line items and discounts on the ledger (adjustments of
 * kind `invoice_void`, as the invoice's own void does); a credit it held goes back to the
 * subscription.
 */
async function voidLines(
  ctx: CommandContext,
  subscription: SubscriptionRecord,
  invoice: InvoiceRecord,
  reason: string,
): Promise<void> {
  const memo = `Void of invoice ${invoice.number}: ${reason}`;
  const lines: NewTransaction[] = [];
  for (const item of invoice.lineItems)
    if (item.totalInCents !== 0)
      lines.push(
        line(subscription, 'adjustment', 'invoice_void', -item.totalInCents, `${memo} (${item.title})`, ctx.now),
      );
  for (const discount of invoice.discounts)
    if (discount.amountInCents !== 0)
      lines.push(
        line(
          subscription,
          'adjustment',
          'invoice_void',
          discount.amountInCents,
          `${memo} (${discount.title})`,
          ctx.now,
        ),
      );
  if (lines.length === 0) {
    // A zero invoice has nothing on the ledger to reverse; a zero line still carries the void.
    lines.push(line(subscription, 'adjustment', 'invoice_void', 0, memo, ctx.now));
  }
  await post(ctx.tx, lines, { invoice: false, voidInvoiceUid: invoice.uid, reason });
}

/**
 * For the commands that end a subscription (an immediate cancellation, the renewal's delayed
 * cancellation or expiration): the open advance invoice of its next period, which will never
 * start, is voided (its lines reversed). One with payments is left for the merchant to refund.
 * The note stays in the data; a voided invoice counts as none. Reads nothing when there is no note.
 */
export async function voidAdvanceInvoiceOnClose(
  ctx: CommandContext,
  subscription: SubscriptionRecord,
  reason: string,
): Promise<void> {
  if (advanceInvoiceNote(subscription.data) === undefined) return;
  const found = await advanceInvoiceOf(ctx.tx, subscription, subscription.periodIndex + 1);
  if (found === undefined || found.invoice.status !== 'open' || found.invoice.paidInCents > 0) return;
  await voidLines(ctx, subscription, found.invoice, reason);
}

/**
 * Refuses (422) a change that would start the subscription's next period itself (a migration that
 * does not keep the period) while an advance invoice bills that period: the period would be billed
 * twice. Void the advance invoice first, or migrate keeping the period (the renewal then bills the
 * new product's difference).
 */
export async function refusePeriodRestartWithAdvanceInvoice(
  tx: StorageTransaction,
  subscription: SubscriptionRecord,
): Promise<void> {
  if (advanceInvoiceNote(subscription.data) === undefined) return;
  if ((await advanceInvoiceOf(tx, subscription, subscription.periodIndex + 1)) === undefined) return;
  throw invalid(
    'Subscription: its next period has an advance invoice; void it before a migration that starts a new period, or keep the period (preserve_period).',
  );
}

/** A ledger line the renewal writes after an advance invoice: a charge, a credit or a coupon adjustment. */
export interface AdvanceDifference {
  readonly type: 'charge' | 'credit' | 'adjustment';
  readonly kind: string;
  readonly componentId: number | null;
  readonly amountInCents: number;
  readonly memo: string;
  /** The coupon of a coupon adjustment. */
  readonly couponCode?: string;
}

/**
 * What the renewal into the assessed period bills, line by line: the assessment's charges and its
 * coupons' (negative) adjustments, or, when an advance invoice already billed that period, only the
 * difference ({@link afterAdvance}). The one place the renewal and its estimates (the billing
 * manifest, the renewal preview, proformas) take the lines from. `subscription` is the
 * subscription before the renewal moves it (its data holds the advance invoice's note). Reads only.
 */
export async function renewalLines(
  tx: StorageTransaction,
  subscription: SubscriptionRecord,
  assessment: Pick<PeriodAssessment, 'period' | 'charges' | 'discounts'>,
): Promise<{ lines: AdvanceDifference[]; advance: { note: AdvanceInvoiceNote; invoice: InvoiceRecord } | undefined }> {
  const advance = await advanceInvoiceOf(tx, subscription, assessment.period.index);
  if (advance !== undefined)
    return { lines: afterAdvance(assessment.charges, assessment.discounts, advance.note), advance };
  const lines: AdvanceDifference[] = assessment.charges.map((c) => ({
    type: 'charge',
    kind: c.kind,
    componentId: c.componentId,
    amountInCents: c.amountInCents,
    memo: c.memo,
  }));
  for (const d of assessment.discounts)
    lines.push({
      type: 'adjustment',
      kind: 'coupon',
      componentId: null,
      amountInCents: d.amountInCents,
      memo: d.memo,
      couponCode: d.code,
    });
  return { lines, advance: undefined };
}

/**
 * What the renewal into a period bills when an advance invoice already billed it: its assessment
 * less what the advance invoice billed, by charge kind and component and by coupon code. A charge
 * that grew is charged the difference, one that shrank or went away is credited it, and a coupon
 * discount is adjusted by its difference; what is unchanged gives no line. Pure.
 */
export function afterAdvance(
  charges: readonly AssessedCharge[],
  discounts: readonly { readonly code: string; readonly amountInCents: number; readonly memo: string }[],
  note: AdvanceInvoiceNote,
): AdvanceDifference[] {
  const key = (kind: string, componentId: number | null) => `${kind}|${componentId ?? ''}`;
  const advanced = new Map<string, { amount: number; memo: string; kind: string; componentId: number | null }>();
  for (const c of note.charges) {
    const k = key(c.kind, c.componentId);
    const seen = advanced.get(k);
    advanced.set(k, {
      amount: (seen?.amount ?? 0) + c.amountInCents,
      memo: seen?.memo ?? c.memo,
      kind: c.kind,
      componentId: c.componentId,
    });
  }
  const out: AdvanceDifference[] = [];
  for (const c of charges) {
    const k = key(c.kind, c.componentId);
    const before = advanced.get(k);
    advanced.delete(k);
    const diff = c.amountInCents - (before?.amount ?? 0);
    if (diff === 0) continue;
    const memo =
      before === undefined
        ? c.memo
        : diff > 0
          ? `${c.memo}, less ${before.amount} billed in advance`
          : `${c.memo}: credit of what the advance invoice billed beyond it`;
    out.push({
      type: diff > 0 ? 'charge' : 'credit',
      kind: c.kind,
      componentId: c.componentId,
      amountInCents: diff,
      memo,
    });
  }
  for (const gone of advanced.values()) {
    if (gone.amount === 0) continue;
    out.push({
      type: 'credit',
      kind: gone.kind,
      componentId: gone.componentId,
      amountInCents: -gone.amount,
      memo: `${gone.memo}: billed in advance, no longer billed`,
    });
  }
  const discounted = new Map<string, { amount: number; memo: string }>();
  for (const d of note.discounts) {
    const seen = discounted.get(d.code);
    discounted.set(d.code, { amount: (seen?.amount ?? 0) + d.amountInCents, memo: seen?.memo ?? d.memo });
  }
  for (const d of discounts) {
    const before = discounted.get(d.code);
    discounted.delete(d.code);
    const diff = d.amountInCents - (before?.amount ?? 0);
    if (diff !== 0)
      out.push({
        type: 'adjustment',
        kind: 'coupon',
        componentId: null,
        amountInCents: diff,
        memo: d.memo,
        couponCode: d.code,
      });
  }
  for (const [code, gone] of discounted)
    if (gone.amount !== 0)
      out.push({
        type: 'adjustment',
        kind: 'coupon',
        componentId: null,
        amountInCents: -gone.amount,
        memo: gone.memo,
        couponCode: code,
      });
  return out;
}
