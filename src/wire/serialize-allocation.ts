import type { ProrationMode } from '../domain/components/index.js';
import { formatInstant } from '../domain/time/index.js';
import type {
  AllocationRecord,
  ComponentKind,
  ComponentRecord,
  PaymentAttemptStatus,
  PricingScheme,
  UsageRecord,
} from '../ports/storage.js';
import type {
  AllocationPayment,
  AllocationPreview,
  BulkAllocationInput,
  SubscriptionComponentView,
} from '../services/allocation-service.js';
import type { SubscriptionView } from '../services/subscription-service.js';
import { wirePrice } from './serialize-component.js';
import type { WireContext } from './wire-context.js';

// The classic scheme names of the modern settings an allocation records; the
// inverse of the engine's `upgradeScheme` / `downgradeScheme`.
const UPGRADE_SCHEME: Readonly<Record<string, string>> = {
  'prorated:false': 'prorate-attempt-capture',
  'prorated:true': 'prorate-delay-capture',
  'full:false': 'full-price-attempt-capture',
  'full:true': 'full-price-delay-capture',
  'none:false': 'no-prorate',
  'none:true': 'no-prorate',
};
const DOWNGRADE_SCHEME: Readonly<Record<string, string>> = { prorated: 'prorate', none: 'no-prorate' };

/** The classic upgrade scheme of a change, or undefined when the record has none. */
function upgradeSchemeName(upgradeCharge: string | null, accrueCharge: boolean): string | undefined {
  return upgradeCharge === null ? undefined : UPGRADE_SCHEME[`${upgradeCharge}:${accrueCharge}`];
}

/** The classic downgrade scheme, or undefined (a `full` credit has no classic name). */
function downgradeSchemeName(downgradeCredit: string | null): string | undefined {
  return downgradeCredit === null ? undefined : DOWNGRADE_SCHEME[downgradeCredit];
}

/** ISO 8601 in UTC to the second (`2012-11-20T22:00:37Z`), the form the service gives an allocation's `timestamp`. */
function utcSeconds(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A credit mode as the SDK's `CreditType` enum takes it, or null for a value outside it. */
function creditType(mode: string | null): ProrationMode | null {
  return mode === 'full' || mode === 'prorated' || mode === 'none' ? mode : null;
}

/**
 * The payment an allocation's charge was collected with (`payment` of an allocation). `id` is the
 * payment transaction's and `memo` its memo; a declined or failed attempt has no transaction, so
 * its `id` is null, its `memo` the gateway's message, and `success` false.
 */
export interface AllocationPaymentJson {
  readonly id: number | null;
  readonly amount_in_cents: number;
  readonly success: boolean;
  readonly memo: string | null;
  /** The attempt's outcome in the engine's words (`succeeded`, `declined`, `failed`, `unknown`). */
  readonly status: PaymentAttemptStatus;
}

/**
 * An allocation as the service writes it (inside `{"allocation":{...}}`):
 * `timestamp` in UTC, `created_at` with the site's offset, and the scheme both in the classic names
 * (`proration_upgrade_scheme`; null where there is none: a `full` credit has no classic name) and
 * the modern fields. `payment` is present only when the change's charge was collected now.
 */
export interface AllocationJson {
  readonly allocation_id: number;
  readonly component_id: number;
  readonly subscription_id: number;
  readonly quantity: number;
  readonly previous_quantity: number;
  readonly memo: string | null;
  readonly timestamp: string;
  readonly created_at: string;
  readonly proration_upgrade_scheme: string | null;
  readonly proration_downgrade_scheme: string | null;
  readonly accrue_charge: boolean;
  readonly upgrade_charge: ProrationMode | null;
  readonly downgrade_credit: ProrationMode | null;
  readonly payment?: AllocationPaymentJson;
}

/** The `payment` of an allocation. */
export function allocationPaymentJson(payment: AllocationPayment): AllocationPaymentJson {
  return {
    id: payment.transaction?.id ?? null,
    amount_in_cents: payment.amountInCents,
    success: payment.status === 'succeeded',
    memo: payment.transaction?.memo ?? payment.message,
    status: payment.status,
  };
}

/** The fields of an allocation, unwrapped; `payment` only when the change's charge was collected now. */
export function allocationJson(
  allocation: AllocationRecord,
  context: WireContext,
  payment?: AllocationPayment | null,
): AllocationJson {
  const up = upgradeSchemeName(allocation.upgradeCharge, allocation.accrueCharge);
  const down = downgradeSchemeName(allocation.downgradeCredit);
  return {
    allocation_id: allocation.id,
    component_id: allocation.componentId,
    subscription_id: allocation.subscriptionId,
    quantity: allocation.quantity,
    previous_quantity: allocation.previousQuantity,
    memo: allocation.memo,
    timestamp: utcSeconds(allocation.createdAt),
    created_at: formatInstant(allocation.createdAt, context.timeZone),
    proration_upgrade_scheme: up ?? null,
    proration_downgrade_scheme: down ?? null,
    accrue_charge: allocation.accrueCharge,
    upgrade_charge: creditType(allocation.upgradeCharge),
    downgrade_credit: creditType(allocation.downgradeCredit),
    ...(payment == null ? {} : { payment: allocationPaymentJson(payment) }),
  };
}

/** `{"allocation":{...}}`: the body of an allocation change and the item of allocation lists. */
export function serializeAllocation(
  allocation: AllocationRecord,
  context: WireContext,
  payment?: AllocationPayment | null,
): { allocation: AllocationJson } {
  return { allocation: allocationJson(allocation, context, payment) };
}

/** A usage record as the service writes it (inside `{"usage":{...}}`). */
export interface UsageJson {
  readonly id: number;
  readonly memo: string | null;
  readonly created_at: string;
  readonly quantity: number;
  readonly component_id: number;
  readonly subscription_id: number;
  /** The unit balance before and after, on the answer to a usage just recorded. */
  readonly previous_unit_balance?: number;
  readonly new_unit_balance?: number;
}

/** The balances around a usage just recorded. */
export interface UsageBalances {
  readonly previousUnitBalance: number;
  readonly newUnitBalance: number;
}

/** `{"usage":{...}}`: the body of a recorded usage (with its balances) and the item of usage lists. */
export function serializeUsage(
  usage: UsageRecord,
  context: WireContext,
  balances?: UsageBalances,
): { usage: UsageJson } {
  return {
    usage: {
      id: usage.id,
      memo: usage.memo,
      created_at: formatInstant(usage.createdAt, context.timeZone),
      quantity: usage.quantity,
      component_id: usage.componentId,
      subscription_id: usage.subscriptionId,
      ...(balances === undefined
        ? {}
        : { previous_unit_balance: balances.previousUnitBalance, new_unit_balance: balances.newUnitBalance }),
    },
  };
}

/** One price bracket of a subscription's component, as component bodies write it. */
export interface SubscriptionComponentPriceJson {
  readonly starting_quantity: number;
  readonly ending_quantity: number | null;
  readonly unit_price: string;
}

/**
 * A component of a subscription as the service writes it (inside `{"component":{...}}` of
 * `GET /subscriptions/{id}/components.json`): `id` and `component_id` are both the component's id,
 * as the service sets them; the allocation, the metered balance and the pricing of the version the
 * subscription is pinned to. `enabled` is written for on/off components only, where it means
 * something.
 */
export interface SubscriptionComponentJson {
  readonly id: number;
  readonly component_id: number;
  readonly subscription_id: number;
  readonly component_handle: string | null;
  readonly name: string;
  readonly kind: ComponentKind;
  readonly unit_name: string;
  readonly description: string | null;
  readonly enabled?: boolean;
  readonly allocated_quantity: number;
  readonly unit_balance: number;
  readonly pricing_scheme: PricingScheme;
  readonly unit_price: string | null;
  readonly prices: readonly SubscriptionComponentPriceJson[];
  readonly currency: string;
  readonly recurring: boolean;
  readonly product_family_id: number;
  /** The pinned pricing version. */
  readonly component_version: number;
  readonly upgrade_charge: null;
  readonly downgrade_credit: null;
  readonly archived_at: string | null;
  readonly created_at: string;
  readonly updated_at: string;
}

/** `{"component":{...}}`: the item of a subscription's component list. */
export function serializeSubscriptionComponent(
  view: SubscriptionComponentView,
  context: WireContext,
): { component: SubscriptionComponentJson } {
  const { subscriptionComponent: row, component, version } = view;
  const first = version.pricing.brackets[0];
  return {
    component: {
      id: component.id,
      component_id: component.id,
      subscription_id: row.subscriptionId,
      component_handle: component.handle,
      name: component.name,
      kind: component.kind,
      unit_name: component.unitName,
      description: component.description,
      ...(component.kind === 'on_off_component' ? { enabled: row.allocatedQuantity > 0 } : {}),
      allocated_quantity: row.allocatedQuantity,
      unit_balance: row.unitBalance,
      pricing_scheme: version.pricing.scheme,
      unit_price: version.pricing.scheme === 'per_unit' && first !== undefined ? wirePrice(first.unitPrice) : null,
      prices: version.pricing.brackets.map((b) => ({
        starting_quantity: b.startingQuantity,
        ending_quantity: b.endingQuantity,
        unit_price: wirePrice(b.unitPrice),
      })),
      currency: context.currency,
      // Metered components bill in arrears for usage; the others renew with the product.
      recurring: component.kind !== 'metered_component',
      product_family_id: component.familyId,
      component_version: row.componentVersion,
      // Per-component credit defaults are not kept: the request or the engine's default decides.
      upgrade_charge: null,
      downgrade_credit: null,
      archived_at: component.archivedAt === null ? null : formatInstant(component.archivedAt, context.timeZone),
      created_at: formatInstant(row.createdAt, context.timeZone),
      updated_at: formatInstant(row.updatedAt, context.timeZone),
    },
  };
}

/** One previewed entry: what was asked, what it would cost, and the component it is for. */
export interface AllocationPreviewEntry {
  readonly input: BulkAllocationInput;
  readonly preview: AllocationPreview;
  readonly component: ComponentRecord;
  readonly previousQuantity: number;
}

/** A line of an allocation preview: the charge or credit one entry would write. */
export interface AllocationPreviewLineJson {
  readonly transaction_type: 'charge' | 'credit';
  readonly kind: ComponentKind;
  readonly amount_in_cents: number;
  readonly memo: string;
  /** The coupons' part of the line, with the line's sign: the line nets `amount - discount`. */
  readonly discount_amount_in_cents: number;
  readonly taxable_amount_in_cents: 0;
  readonly component_id: number;
  readonly component_handle?: string;
  readonly direction: 'upgrade' | 'downgrade';
}

/** One entry of a preview's `allocations`. */
export interface AllocationPreviewItemJson {
  readonly component_id: number;
  readonly subscription_id: number;
  readonly quantity: number | string;
  readonly previous_quantity: number;
  readonly memo: string | null;
  readonly timestamp: null;
  readonly accrue_charge?: boolean;
  readonly upgrade_charge: ProrationMode | null;
  readonly downgrade_credit: ProrationMode | null;
  readonly proration_upgrade_scheme?: string;
  readonly proration_downgrade_scheme?: string;
}

/**
 * What an allocation change would cost now (inside `{"allocation_preview":{...}}`):
 * the current period, one line per charge or credit, their total (a credit counts negative), and
 * `period_type: "prorated"`. `direction` is the sign of the total and is left out when nothing
 * changes (the SDK's enum has only `upgrade` and `downgrade`). The subscription's percentage
 * coupons discount each line (a credit's discount is negative: it gives back only what was paid);
 * `total_in_cents` is the subtotal less the discounts. Taxes are not applied, so their total is 0.
 */
export interface AllocationPreviewJson {
  readonly start_date: string | null;
  readonly end_date: string | null;
  readonly subtotal_in_cents: number;
  readonly total_tax_in_cents: 0;
  readonly total_discount_in_cents: number;
  readonly total_in_cents: number;
  readonly direction?: 'upgrade' | 'downgrade';
  readonly line_items: readonly AllocationPreviewLineJson[];
  readonly allocations: readonly AllocationPreviewItemJson[];
  readonly existing_balance_in_cents: number;
  readonly period_type: 'prorated';
}

/** `{"allocation_preview":{...}}`, the body of `POST /subscriptions/{id}/allocations/preview.json`. */
export function serializeAllocationPreview(
  subscription: SubscriptionView,
  entries: readonly AllocationPreviewEntry[],
  context: WireContext,
): { allocation_preview: AllocationPreviewJson } {
  const s = subscription.subscription;
  const lines: AllocationPreviewLineJson[] = [];
  for (const { input, preview, component, previousQuantity } of entries) {
    if (preview.chargeInCents === 0 && preview.creditInCents === 0) continue;
    const charge = preview.chargeInCents > 0;
    // Worded like the memo the engine gives the line it would write.
    const unit = component.kind === 'on_off_component' ? '' : ` ${component.unitName}`;
    lines.push({
      transaction_type: charge ? 'charge' : 'credit',
      kind: component.kind,
      amount_in_cents: charge ? preview.chargeInCents : -preview.creditInCents,
      memo: input.memo ?? `${component.name}: ${previousQuantity} to ${String(input.quantity)}${unit}`,
      discount_amount_in_cents: charge ? preview.discountInCents : -preview.discountInCents,
      taxable_amount_in_cents: 0,
      component_id: component.id,
      ...(component.handle === null ? {} : { component_handle: component.handle }),
      direction: charge ? 'upgrade' : 'downgrade',
    });
  }
  const subtotal = lines.reduce((sum, line) => sum + line.amount_in_cents, 0);
  const discount = lines.reduce((sum, line) => sum + line.discount_amount_in_cents, 0);
  const total = subtotal - discount;
  return {
    allocation_preview: {
      start_date: s.currentPeriodStartedAt ? formatInstant(s.currentPeriodStartedAt, context.timeZone) : null,
      end_date: s.currentPeriodEndsAt ? formatInstant(s.currentPeriodEndsAt, context.timeZone) : null,
      subtotal_in_cents: subtotal,
      total_tax_in_cents: 0,
      total_discount_in_cents: discount,
      total_in_cents: total,
      ...(total > 0 ? { direction: 'upgrade' as const } : total < 0 ? { direction: 'downgrade' as const } : {}),
      line_items: lines,
      allocations: entries.map(({ input, previousQuantity }) => {
        return {
          component_id: input.componentId,
          subscription_id: s.id,
          quantity: input.quantity,
          previous_quantity: previousQuantity,
          memo: input.memo ?? null,
          timestamp: null,
          ...(input.accrueCharge === undefined ? {} : { accrue_charge: input.accrueCharge }),
          upgrade_charge: creditType(input.upgradeCharge ?? null),
          downgrade_credit: creditType(input.downgradeCredit ?? null),
          ...(input.prorationUpgradeScheme === undefined
            ? {}
            : { proration_upgrade_scheme: input.prorationUpgradeScheme }),
          ...(input.prorationDowngradeScheme === undefined
            ? {}
            : { proration_downgrade_scheme: input.prorationDowngradeScheme }),
        };
      }),
      existing_balance_in_cents: subscription.balanceInCents,
      period_type: 'prorated',
    },
  };
}
