/**
 * Components in the subscription's own billing: what a signup adds and charges,
 * and what a renewal charges. The signup and renewal services call these inside their commands;
 * nothing here opens a transaction, calls the gateway or records an event.
 */
import { componentPrice } from '../domain/catalog/component-pricing.js';
import { prorate } from '../domain/money/index.js';
import { BillingError, type BillingErrorDetail, ValidationCollector } from '../errors.js';
import type {
  ComponentKind,
  ComponentRecord,
  SiteRecord,
  StorageTransaction,
  SubscriptionComponentRecord,
  SubscriptionRecord,
} from '../ports/storage.js';
import type { CommandContext } from './command-runner.js';
import {
  allocationError,
  allocationProblem,
  componentRow,
  describeDates,
  ON_OFF_MESSAGE,
  readQuantity,
} from './component-inputs.js';
import { loadComponentVersion } from './component-service.js';
import { findComponentPricePointRef } from './price-point-service.js';

/**
 * One component of a signup (`components[]` of the subscription create). The component is named by
 * id or handle. Quantity-based and on/off components read `allocatedQuantity`, else `quantity`,
 * else `unitBalance` (the spec's only documented field, so clients that follow it still work);
 * metered components read `unitBalance`, else `quantity`. Numbers may arrive as strings.
 */
export interface SignupComponentInput {
  readonly componentId?: number;
  readonly handle?: string;
  readonly allocatedQuantity?: number | string;
  readonly unitBalance?: number | string;
  readonly quantity?: number | string;
  /** The component's price point to bill at (an id, or a handle, `handle:` allowed); default its default price point. */
  readonly pricePoint?: number | string;
}

/** The first period of a signup, as the signup plan computed it. */
export interface SignupComponentPeriod {
  readonly start: Date;
  readonly end: Date;
  /** The signup instant. */
  readonly now: Date;
  /** False when nothing is charged at signup (trials, imports with a future next billing date). */
  readonly chargeNow: boolean;
  /**
   * For a short first period (calendar billing), the start of the full period it is the tail of:
   * components are then charged the part `(end - now) / (end - prorationPeriodStart)`, as the
   * baseline is. Absent for a normal full first period, which is charged in full.
   */
  readonly prorationPeriodStart?: Date;
}

/** A component a signup adds, checked and pinned to the component's current version. */
export interface PlannedComponent {
  readonly component: ComponentRecord;
  /** The current version at signup; the subscription is billed at it from then on. */
  readonly componentVersion: number;
  /** Units (quantity-based) or 0/1 (on/off); 0 for metered. */
  readonly allocatedQuantity: number;
  /** Starting metered balance; 0 for the other kinds. */
  readonly unitBalance: number;
}

/**
 * A component charge for the caller to turn into a ledger `charge` line: `kind` is the component
 * kind (one of the ledger's charge kinds), `componentId` goes on the line, `amountInCents` is positive.
 */
export interface ComponentChargeLine {
  readonly kind: ComponentKind;
  readonly componentId: number;
  readonly amountInCents: number;
  readonly memo: string;
}

/** What {@link planSignupComponents} returns: the rows to write and the charges of the first period. */
export interface SignupComponentsPlan {
  readonly rows: readonly PlannedComponent[];
  readonly lines: readonly ComponentChargeLine[];
}

/**
 * Checks the components of a signup and prices them, before any payment (call it in the signup's
 * planning transaction; it reads only). Each component must exist in the product's family and not
 * be archived ("Component: '<id or handle>' does not exist." / "... has been archived."), appear
 * once, and have a whole non-negative quantity; an on/off component takes only 0 or 1, reported in
 * the service's allocation object form. With `chargeNow`, quantity-based and
 * on/off components are charged for the first period in advance at the component's current
 * version (in full, or prorated like the baseline for a short first period); metered components
 * only start their balance (billed in arrears at renewal) and are never charged here. Zero charges
 * give no line. Throws `validation` (list shape; the object shape when only on/off quantities are
 * wrong) and reads nothing it would write.
 */
export async function planSignupComponents(
  tx: StorageTransaction,
  site: SiteRecord,
  productFamilyId: number,
  inputs: readonly SignupComponentInput[],
  period: SignupComponentPeriod,
): Promise<SignupComponentsPlan> {
  const errors = new ValidationCollector();
  const onOff: BillingErrorDetail[] = [];
  const resolved: { component: ComponentRecord; quantity: number; version: number }[] = [];
  const seen = new Set<number>();
  for (const [index, input] of inputs.entries()) {
    const at = `components[${index}]`;
    const reference = input.componentId ?? input.handle;
    if (reference === undefined || reference === null || reference === '') {
      errors.add('Component: cannot be blank.', `${at}.component_id`);
      continue;
    }
    const component = await findComponent(tx, site.id, reference);
    if (component === undefined || component.familyId !== productFamilyId) {
      errors.add(`Component: '${String(reference)}' does not exist.`, `${at}.component_id`);
      continue;
    }
    if (component.archivedAt !== null) {
      errors.add(`Component: '${String(reference)}' has been archived.`, `${at}.component_id`);
      continue;
    }
    if (seen.has(component.id)) {
      errors.add(`Component: '${String(reference)}' is given more than once.`, `${at}.component_id`);
      continue;
    }
    seen.add(component.id);
    const [value, label, attribute] = quantityField(component.kind, input);
    const quantity = errors.capture(() => readQuantity(value ?? 0, label, `${at}.${attribute}`));
    if (quantity === undefined) continue;
    if (component.kind === 'on_off_component' && quantity > 1) {
      onOff.push(allocationProblem(component.id, 'quantity', ON_OFF_MESSAGE));
      continue;
    }
    let version = component.currentVersion;
    if (input.pricePoint !== undefined) {
      const pricePoint = await findComponentPricePointRef(tx, site.id, component.id, input.pricePoint);
      if (pricePoint === undefined) {
        errors.add(`Price point: '${String(input.pricePoint)}' does not exist.`, `${at}.price_point_id`);
        continue;
      }
      if (pricePoint.archivedAt !== null) {
        errors.add(`Price point: '${String(input.pricePoint)}' has been archived.`, `${at}.price_point_id`);
        continue;
      }
      version = pricePoint.version;
    }
    resolved.push({ component, quantity, version });
  }
  errors.throwIfAny();
  if (onOff.length > 0) throw allocationError(onOff);

  const rows: PlannedComponent[] = [];
  const lines: ComponentChargeLine[] = [];
  for (const { component, quantity, version: componentVersion } of resolved) {
    const metered = component.kind === 'metered_component';
    rows.push({
      component,
      componentVersion,
      allocatedQuantity: metered ? 0 : quantity,
      unitBalance: metered ? quantity : 0,
    });
    if (metered || !period.chargeNow || quantity === 0) continue;
    const { version } = await loadComponentVersion(tx, site.id, component.id, componentVersion);
    const full = errors.capture(() => componentPrice(version.pricing, quantity, site.currency));
    if (full === undefined) continue;
    const partial =
      period.prorationPeriodStart !== undefined &&
      period.prorationPeriodStart.getTime() < period.start.getTime() &&
      period.end.getTime() > period.prorationPeriodStart.getTime();
    const amount = partial
      ? prorate(
          full,
          Math.max(0, period.end.getTime() - period.now.getTime()),
          period.end.getTime() - (period.prorationPeriodStart as Date).getTime(),
        )
      : full;
    if (amount <= 0) continue;
    lines.push({
      kind: component.kind,
      componentId: component.id,
      amountInCents: amount,
      memo: `${describeAllocation(component, quantity)} (${describeDates(period.start, period.end)}${partial ? ', prorated' : ''})`,
    });
  }
  // A quantity beyond a closed last bracket is only known once priced.
  errors.throwIfAny();
  return { rows, lines };
}

/**
 * Writes the planned components of a new subscription, pinned to the versions the plan priced,
 * inside the signup's final transaction. Records no event: `component_allocation_change` is for
 * changes after signup. Returns the stored rows in plan order.
 */
export async function writeSignupComponents(
  ctx: CommandContext,
  subscription: SubscriptionRecord,
  rows: readonly PlannedComponent[],
): Promise<SubscriptionComponentRecord[]> {
  const written: SubscriptionComponentRecord[] = [];
  for (const row of rows) {
    written.push(
      await ctx.tx.subscriptionComponents.upsert(
        componentRow(
          subscription,
          row.component.id,
          {
            componentVersion: row.componentVersion,
            allocatedQuantity: row.allocatedQuantity,
            unitBalance: row.unitBalance,
          },
          ctx.now,
          ctx.now,
        ),
      ),
    );
  }
  return written;
}

/**
 * The component charges of a renewal into `newPeriod`, in component id order: quantity-based and
 * on/off components at their allocation and pinned version for the new period, in advance; metered
 * components for the usage of the period that is ending, in arrears, priced with their scheme. It
 * then takes the billed usage off each metered balance, atomically (`addUsage` of minus what was
 * billed), so usage recorded concurrently is kept for the next period rather than lost; that reset
 * records no `metered_usage` event. Zero charges give no line. Call it in the
 * renewal's first step, in the transaction that writes the renewal's lines; `subscription` may be
 * the record before or after the period moved (only its ids are used).
 */
export async function renewalComponentLines(
  ctx: CommandContext,
  subscription: SubscriptionRecord,
  newPeriod: { readonly index: number; readonly start: Date; readonly end: Date },
  options: { readonly resetMetered?: boolean } = {},
): Promise<ComponentChargeLine[]> {
  // An estimate (the next billing manifest) prices the usage without taking it off.
  const resetMetered = options.resetMetered ?? true;
  const site = await ctx.tx.sites.findById(subscription.siteId);
  if (!site) throw new BillingError('storage', `Subscription ${subscription.id} refers to a missing site.`);
  const lines: ComponentChargeLine[] = [];
  for (const row of await ctx.tx.subscriptionComponents.listForSubscription(site.id, subscription.id)) {
    const { component, version } = await loadComponentVersion(ctx.tx, site.id, row.componentId, row.componentVersion);
    if (component.kind === 'metered_component') {
      if (row.unitBalance <= 0) continue;
      const amount = componentPrice(version.pricing, row.unitBalance, site.currency);
      if (amount > 0) {
        lines.push({
          kind: component.kind,
          componentId: component.id,
          amountInCents: amount,
          memo: `${component.name}: ${row.unitBalance} ${component.unitName} (usage to ${newPeriod.start.toISOString().slice(0, 10)})`,
        });
      }
      if (resetMetered) {
        const reset = await ctx.tx.subscriptionComponents.addUsage(
          site.id,
          subscription.id,
          component.id,
          -row.unitBalance,
          ctx.now,
        );
        if (!reset) throw new BillingError('storage', `Subscription component ${row.id} vanished during a renewal.`);
      }
      continue;
    }
    if (row.allocatedQuantity <= 0) continue;
    const amount = componentPrice(version.pricing, row.allocatedQuantity, site.currency);
    if (amount <= 0) continue;
    lines.push({
      kind: component.kind,
      componentId: component.id,
      amountInCents: amount,
      memo: `${describeAllocation(component, row.allocatedQuantity)} (${describeDates(newPeriod.start, newPeriod.end)})`,
    });
  }
  return lines;
}

/** `Seats: 5 seat` for quantities, the bare name for an on/off component that is on. */
function describeAllocation(component: ComponentRecord, quantity: number): string {
  return component.kind === 'on_off_component'
    ? component.name
    : `${component.name}: ${quantity} ${component.unitName}`;
}

async function findComponent(
  tx: StorageTransaction,
  siteId: number,
  reference: number | string,
): Promise<ComponentRecord | undefined> {
  if (typeof reference === 'number') {
    return Number.isSafeInteger(reference) && reference > 0 ? tx.components.findById(siteId, reference) : undefined;
  }
  if (typeof reference !== 'string') return undefined;
  // A numeric string is an id, as JSON clients send `"component_id": "12"`.
  if (/^\d+$/.test(reference)) return tx.components.findById(siteId, Number(reference));
  return tx.components.findByHandle(siteId, reference);
}

/** Which input field carries the quantity of a component of this kind, with its label and attribute. */
function quantityField(kind: ComponentKind, input: SignupComponentInput): [unknown, string, string] {
  if (kind === 'metered_component') {
    return input.unitBalance !== undefined
      ? [input.unitBalance, 'Unit balance', 'unit_balance']
      : [input.quantity, 'Quantity', 'quantity'];
  }
  if (input.allocatedQuantity !== undefined)
    return [input.allocatedQuantity, 'Allocated quantity', 'allocated_quantity'];
  if (input.quantity !== undefined) return [input.quantity, 'Quantity', 'quantity'];
  return [input.unitBalance, 'Unit balance', 'unit_balance'];
}
