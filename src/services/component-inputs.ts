/**
 * Input rules shared by the component billing functions and the allocation service: whole-number
 * quantities, the allocation error shape of the service, which subscriptions take allocation
 * changes, and the webhook timestamp of component events.
 */
import { BillingError, type BillingErrorDetail, invalid, validationError } from '../errors.js';
import type {
  ComponentRecord,
  ProductRecord,
  SubscriptionComponentRecord,
  SubscriptionRecord,
  SubscriptionState,
} from '../ports/storage.js';

/**
 * States whose subscriptions take allocation changes and usage: the ones that still renew. A
 * canceled, expired or paused subscription has no period to charge a change against.
 */
export const LIVE_STATES: readonly SubscriptionState[] = ['active', 'trialing', 'past_due', 'soft_failure', 'unpaid'];

/** The message of a change to a subscription that is not live. */
export const NOT_ELIGIBLE = 'This subscription is not eligible for allocation changes.';

/** The service's message for an on/off quantity other than 0 or 1. */
export const ON_OFF_MESSAGE = 'Quantity: must be either 1 (on) or 0 (off).';

/**
 * A whole, non-negative quantity from a number or a string of digits (JSON clients send both).
 * Fractional quantities are refused: the engine prices whole units only (the service allows
 * fractions only when a component enables them, which ours cannot yet).
 */
export function readQuantity(value: unknown, label: string, attribute: string): number {
  const parsed = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value.trim()) : value;
  if (typeof parsed !== 'number' || Number.isNaN(parsed)) throw invalid(`${label}: is not a number.`, attribute);
  if (!Number.isSafeInteger(parsed) || parsed < 0) {
    throw invalid(`${label}: must be a whole number greater than or equal to 0.`, attribute);
  }
  return parsed;
}

/**
 * One problem of an allocation in the service's object form
 * (`{"kind":"allocation","component_id":N,"on":"quantity","message":"..."}`).
 */
export function allocationProblem(componentId: number, on: string, message: string): BillingErrorDetail {
  return { message, attribute: on, extra: { kind: 'allocation', component_id: componentId, on } };
}

/** A validation error whose body is the list of allocation objects. */
export function allocationError(details: readonly BillingErrorDetail[]): BillingError {
  return validationError(details, 'objects');
}

/**
 * Runs `check`, turning a validation error it throws into allocation problems of `componentId`
 * (so a pricing refusal reads like every other allocation error); returns undefined then.
 */
export function captureAllocation<T>(
  componentId: number,
  on: string,
  problems: BillingErrorDetail[],
  check: () => T,
): T | undefined {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof BillingError) || error.code !== 'validation') throw error;
    for (const detail of error.details) problems.push(allocationProblem(componentId, on, detail.message));
    return undefined;
  }
}

/** ISO 8601 in UTC to the second, as the newer component events carry it. */
export function eventTimestamp(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `YYYY-MM-DD - YYYY-MM-DD` (UTC dates), as the baseline memos describe a period. */
export function describeDates(start: Date, end: Date): string {
  return `${start.toISOString().slice(0, 10)} - ${end.toISOString().slice(0, 10)}`;
}

/** The parts of the component events that name the component, subscription and product. */
export function componentEventSubject(
  component: ComponentRecord,
  subscription: SubscriptionRecord,
  product: ProductRecord,
  productName: string,
): Record<string, unknown> {
  return {
    component: { id: component.id, name: component.name, unit_name: component.unitName, kind: component.kind },
    // The service has no subscription name of its own; the product name is what its pages show.
    subscription: { id: subscription.id, name: productName, state: subscription.state },
    product: { id: product.id, handle: product.handle, name: productName },
  };
}

/** A subscription component row as `upsert` takes it. */
export function componentRow(
  subscription: SubscriptionRecord,
  componentId: number,
  fields: Pick<SubscriptionComponentRecord, 'componentVersion' | 'allocatedQuantity' | 'unitBalance'>,
  createdAt: Date,
  updatedAt: Date,
): Omit<SubscriptionComponentRecord, 'id'> {
  return {
    siteId: subscription.siteId,
    subscriptionId: subscription.id,
    componentId,
    ...fields,
    createdAt,
    updatedAt,
  };
}
