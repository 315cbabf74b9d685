import { z } from 'zod';
import type { ProrationMode } from '../domain/components/index.js';
import { BillingError, type BillingErrorDetail, invalid, validationError } from '../errors.js';
import type { AllocationInput, BulkAllocationInput, UsageInput } from '../services/allocation-service.js';
import { allocationProblem } from '../services/component-inputs.js';
import { type ListPage, pageQuery, pageQueryWithDefault } from './list-query.js';
import { isGiven } from './subscription-request.js';
import { defineWireRequest, isPlainObject, parseWireRequest } from './wire-request.js';
import { wireBoolean, wireId, wireText } from './wire-scalars.js';

/** One allocation as the engine takes it, without the component (the path or the entry names it). */
export type WireAllocation = Omit<AllocationInput, 'uniquenessToken'>;

// Keys of a bulk body's top level that apply to every entry that does not set its own (the SDK's
// `allocateComponents` sends them there).
const DEFAULT_KEYS = [
  'proration_upgrade_scheme',
  'proration_downgrade_scheme',
  'accrue_charge',
  'upgrade_charge',
  'downgrade_credit',
  'payment_collection_method',
  'initiate_dunning',
] as const;

// Each check sits on its field, not in a refinement of the whole object: zod skips an object's
// refinements once a field has failed, and a client should see every problem at once.

/** A field the engine cannot honour: refused (422) when given, rather than ignored. */
const unsupported = z
  .unknown()
  .optional()
  .refine((v) => !isGiven(v), { message: 'is not supported by this server yet.' });

/** A required quantity: a number or a string for the engine to check; missing or null is blank. */
const requiredQuantity = z.unknown().transform((v, ctx): number | string => {
  if (typeof v === 'number' || typeof v === 'string') return v;
  ctx.addIssue({ code: 'custom', message: v == null ? 'cannot be blank.' : 'is not a number.' });
  return z.NEVER;
});

/**
 * The fields of one allocation (`{"allocation":{...}}`): `quantity`, `memo`, the
 * classic `proration_upgrade_scheme` / `proration_downgrade_scheme`, and the modern
 * `accrue_charge`, `upgrade_charge`, `downgrade_credit`. Values are only type-checked here: the
 * engine checks quantities, modes and scheme names with the service's messages. `component_id` is
 * read for bulk entries and ignored where the path names the component. `price_point_id` (and
 * `price_point_handle`) never reach this schema: the allocation routes take them out first
 * (`takeAllocationPricePoint`) and hand them to the engine, which allocates at that price point;
 * one left here is refused. Refused rather than ignored, because the allocation would not be what
 * was asked: `billing_schedule`, a collection method other than `automatic`, and
 * `initiate_dunning: true` (a failed immediate payment accrues to the next renewal here instead).
 */
export const allocationFields = z
  .object(
    {
      component_id: wireId.nullish(),
      quantity: requiredQuantity,
      memo: wireText.nullish(),
      proration_upgrade_scheme: wireText.nullish(),
      proration_downgrade_scheme: wireText.nullish(),
      accrue_charge: wireBoolean.nullish(),
      upgrade_charge: wireText.nullish(),
      downgrade_credit: wireText.nullish(),
      payment_collection_method: wireText.nullish().refine((v) => v == null || v === 'automatic', {
        message: "must be 'automatic'; other collection methods are not supported by this server yet.",
      }),
      initiate_dunning: wireBoolean.nullish().refine((v) => v !== true, {
        message: 'dunning on a failed allocation payment is not supported by this server yet.',
      }),
      price_point_id: unsupported,
      billing_schedule: unsupported,
    },
    { error: 'must be an object.' },
  )
  .transform((a): WireAllocation & { readonly componentId?: number } => ({
    quantity: a.quantity,
    ...(a.component_id == null ? {} : { componentId: a.component_id }),
    ...(a.memo === undefined ? {} : { memo: a.memo }),
    ...(a.proration_upgrade_scheme == null ? {} : { prorationUpgradeScheme: a.proration_upgrade_scheme }),
    ...(a.proration_downgrade_scheme == null ? {} : { prorationDowngradeScheme: a.proration_downgrade_scheme }),
    ...(a.accrue_charge == null ? {} : { accrueCharge: a.accrue_charge }),
    // The engine checks the mode against full / prorated / none and answers in the allocation shape.
    ...(a.upgrade_charge == null ? {} : { upgradeCharge: a.upgrade_charge as ProrationMode }),
    ...(a.downgrade_credit == null ? {} : { downgradeCredit: a.downgrade_credit as ProrationMode }),
  }));

/** `POST /subscriptions/{id}/components/{cid}/allocations.json`: body `{"allocation":{...}}`. */
export const allocationRequest = defineWireRequest('allocation', allocationFields);

/** The `on` of an allocation problem: the field a detail's attribute names (`allocation.quantity` → `quantity`). */
function problemOn(attribute: string | undefined, fallback: string): string {
  const keys = (attribute ?? '').split('.').filter((key) => key !== '' && !/^\d+$/.test(key));
  return keys.at(-1) ?? fallback;
}

/**
 * A validation error of an allocation endpoint in the service's allocation object shape
 * (`{"errors":[{"kind":"allocation","component_id":N,"on":"quantity","message":"..."}]}`),
 * whichever layer found the problem, so a client reads every 422 of
 * these endpoints one way. Errors already in that shape, and every other error, pass unchanged.
 */
export function asAllocationError(error: unknown, componentId: number): unknown {
  if (!(error instanceof BillingError) || error.code !== 'validation' || error.shape === 'objects') return error;
  return validationError(
    error.details.map((d) => allocationProblem(componentId, problemOn(d.attribute, 'allocation'), d.message)),
    'objects',
  );
}

/**
 * Reads `{"allocation":{...}}` for the component the path names; every problem is answered in the
 * allocation object shape with that component's id (see {@link asAllocationError}).
 */
export function parseAllocationRequest(body: unknown, componentId: number): WireAllocation {
  try {
    const { componentId: _ignored, ...allocation } = parseWireRequest(allocationRequest, body);
    return allocation;
  } catch (error) {
    throw asAllocationError(error, componentId);
  }
}

/** Options of {@link parseAllocationList}. */
export interface AllocationListOptions {
  /**
   * For a preview: `effective_proration_date` is refused, since the engine prices a change at the
   * current instant only and a preview for another date would show the wrong amount.
   */
  readonly preview?: boolean;
}

/**
 * Reads the `{"allocations":[{component_id, quantity, ...}], ...}` body of a bulk allocation or a
 * preview. The top-level `proration_upgrade_scheme`, `proration_downgrade_scheme`,
 * `accrue_charge`, `upgrade_charge`, `downgrade_credit`, `payment_collection_method` and
 * `initiate_dunning` apply to every entry that does not set its own. An entry without a usable
 * `component_id` is a plain 422 ("Component: cannot be blank.", as the engine words it); every other
 * problem is reported at once in the allocation object shape, under its entry's component.
 */
export function parseAllocationList(body: unknown, options: AllocationListOptions = {}): BulkAllocationInput[] {
  const list = isPlainObject(body) ? body.allocations : undefined;
  if (!Array.isArray(list) || list.length === 0) {
    throw invalid(
      'Allocations: must be a non-empty list of allocations, like {"allocations":[{"component_id":1,"quantity":2}]}.',
      'allocations',
    );
  }
  const top = isPlainObject(body) ? body : {};
  if (options.preview && isGiven(top.effective_proration_date)) {
    throw invalid('Effective proration date: is not supported by this server yet.', 'effective_proration_date');
  }
  const entries: BulkAllocationInput[] = [];
  const problems: BillingErrorDetail[] = [];
  list.forEach((item, index) => {
    const componentId = wireId.safeParse(isPlainObject(item) ? item.component_id : undefined).data;
    if (componentId === undefined) throw invalid('Component: cannot be blank.', `allocations.${index}.component_id`);
    const merged: Record<string, unknown> = { ...(item as Record<string, unknown>) };
    for (const key of DEFAULT_KEYS) {
      if (merged[key] == null && top[key] != null) merged[key] = top[key];
    }
    try {
      const { componentId: _entryId, ...allocation } = parseWireRequest(allocationRequest, { allocation: merged });
      entries.push({ ...allocation, componentId });
    } catch (error) {
      const shaped = asAllocationError(error, componentId);
      if (!(shaped instanceof BillingError)) throw shaped;
      problems.push(...shaped.details);
    }
  });
  if (problems.length > 0) throw validationError(problems, 'objects');
  return entries;
}

/**
 * The fields of `{"usage":{...}}` (metered usage): `quantity` and `memo`. Price points and billing
 * schedules are refused, since the engine records usage at the subscription's pinned price only.
 */
export const usageFields = z
  .object(
    {
      quantity: requiredQuantity,
      memo: wireText.nullish(),
      price_point_id: unsupported,
      billing_schedule: unsupported,
    },
    { error: 'must be an object.' },
  )
  .transform(
    (u): Omit<UsageInput, 'uniquenessToken'> => ({
      quantity: u.quantity,
      ...(u.memo === undefined ? {} : { memo: u.memo }),
    }),
  );

/** `POST /subscriptions/{id}/components/{cid}/usages.json`: body `{"usage":{quantity, memo}}`. */
export const usageRequest = defineWireRequest('usage', usageFields);

/** `GET .../components/{cid}/allocations.json` paging: `page` only in the SDK, 50 a page (the service's "50 most recent"). */
export const allocationListQuery = pageQueryWithDefault(50);

/** Query of a usage list: paging, and the id bounds the service offers. */
export interface UsageListQuery extends ListPage {
  /** Only usages with an id at least this. */
  readonly sinceId?: number;
  /** Only usages with an id at most this. */
  readonly maxId?: number;
}

/**
 * Reads `GET .../components/{cid}/usages.json?since_id&max_id&page&per_page` (20 a page, at most
 * 200). Paging is lenient as on every list; a bad id bound is a 422. The date bounds are refused
 * (422): the engine does not filter usages by date, and ignoring the bounds would list usages the
 * client asked to leave out.
 */
export const usageListQuery = z
  .object({
    page: z.unknown().optional(),
    per_page: z.unknown().optional(),
    // An empty value (`since_id=`) counts as not given, like the empty pairs the SDK sends.
    since_id: z.preprocess((v) => (v === '' ? undefined : v), wireId.optional()),
    max_id: z.preprocess((v) => (v === '' ? undefined : v), wireId.optional()),
    since_date: unsupported,
    until_date: unsupported,
  })
  .transform((q): UsageListQuery => {
    const page = pageQuery.parse({ page: q.page, per_page: q.per_page });
    return {
      ...page,
      ...(q.since_id === undefined ? {} : { sinceId: q.since_id }),
      ...(q.max_id === undefined ? {} : { maxId: q.max_id }),
    };
  });
