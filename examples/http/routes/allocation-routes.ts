import {
  type AllocationEffect,
  type AllocationPayment,
  type BulkAllocationInput,
  notFound,
  type SubscriptionComponentView,
  validationError,
} from 'billing-engine';
import type { Hono } from 'hono';
import {
  type HttpAppEnv,
  type HttpContext,
  idParam,
  JSON_SEGMENT,
  readJsonBody,
  sendJson,
  stripJsonSuffix,
  wireContext,
} from '../http-context.js';
import {
  type AllocationPreviewEntry,
  allocationListQuery,
  pageOf,
  parseAllocationList,
  parseAllocationRequest,
  parseWireParams,
  parseWireRequest,
  serializeAllocation,
  serializeAllocationPreview,
  serializeSubscriptionComponent,
  serializeUsage,
  subscriptionComponentPricePointJson,
  takeAllocationPricePoint,
  uniquenessTokenOf,
  usageListQuery,
  usageRequest,
  type WireContext,
} from '../wire-bridge.js';
import { queryOf } from './route-params.js';

/**
 * The component a path names: a numeric id, or `handle:<handle>` as the service's component paths
 * allow. A handle is resolved on the request's site only, so another site's handle is not found.
 */
async function componentParam(c: HttpContext): Promise<number> {
  const raw = stripJsonSuffix(c.req.param('cid') ?? '');
  if (raw.startsWith('handle:') && raw.length > 'handle:'.length) {
    return (await c.var.site.components.get(raw.slice('handle:'.length))).component.id;
  }
  return idParam(c, 'cid', 'Component');
}

/**
 * A component of this site, for the lists: the engine lists a subscription's history by component
 * id without looking the component up, and an id that names nothing here must be a 404, not `[]`.
 */
async function knownComponent(c: HttpContext): Promise<number> {
  const id = await componentParam(c);
  await c.var.site.components.get(id);
  return id;
}

/**
 * Reads `{"allocation":{...}}` with its price point: `price_point_id` (an id, or a handle) and
 * `price_point_handle` are taken out for the engine, which moves the component to that price point;
 * the rest is read as any allocation.
 */
function allocationWithPricePoint(body: unknown, componentId: number) {
  const wrapped = body !== null && typeof body === 'object' ? (body as Record<string, unknown>).allocation : undefined;
  const { allocation, pricePoint } = takeAllocationPricePoint(wrapped);
  const rest = { ...(body as Record<string, unknown>), allocation };
  return { ...parseAllocationRequest(rest, componentId), ...pricePoint };
}

/** Reads a bulk or preview body (see {@link parseAllocationList}) with each entry's price point. */
function allocationListWithPricePoints(body: unknown, options: { preview?: boolean } = {}): BulkAllocationInput[] {
  const list = body !== null && typeof body === 'object' ? (body as Record<string, unknown>).allocations : undefined;
  if (!Array.isArray(list)) return parseAllocationList(body, options);
  const taken = list.map((entry) => takeAllocationPricePoint(entry));
  const entries = parseAllocationList(
    { ...(body as Record<string, unknown>), allocations: taken.map((t) => t.allocation) },
    options,
  );
  return entries.map((entry, index) => ({ ...entry, ...taken[index]!.pricePoint }));
}

/**
 * `{"component":{...}}` of each subscription component, with the price point of the version it is
 * billed at (`price_point_id`, `_handle`, `_type`, `_name`).
 */
async function subscriptionComponentBodies(c: HttpContext, id: number, views: readonly SubscriptionComponentView[]) {
  const pricePoints = new Map(
    (await c.var.site.pricePoints.listSubscriptionComponentPricePoints(id)).map((p) => [
      p.subscriptionComponent.componentId,
      p.pricePoint,
    ]),
  );
  const context = await wireContext(c);
  return views.map((view) => {
    const body = serializeSubscriptionComponent(view, context);
    return {
      component: {
        ...body.component,
        ...subscriptionComponentPricePointJson(pricePoints.get(view.component.id)),
      },
    };
  });
}

/**
 * `{"allocation":{...}}` of a change just made, with the price point it was priced at
 * (`price_point_id`, `_handle`, `_name`) and, when it moved the component, `previous_price_point_id`.
 */
function allocationBody(effect: AllocationEffect, context: WireContext, payment: AllocationPayment | null) {
  const body = serializeAllocation(effect.allocation, context, payment);
  const { pricePoint, previousPricePoint } = effect;
  return {
    allocation: {
      ...body.allocation,
      ...(pricePoint === undefined
        ? {}
        : {
            price_point_id: pricePoint.id,
            price_point_handle: pricePoint.handle,
            price_point_name: pricePoint.name,
          }),
      ...(previousPricePoint === undefined ? {} : { previous_price_point_id: previousPricePoint.id }),
    },
  };
}

/** True when this change's charge was part of the payment collected right after it. */
function collected(effect: AllocationEffect): boolean {
  return effect.chargeInCents > 0 && !effect.allocation.accrueCharge;
}

/**
 * Component allocations and metered usage of a subscription: one allocation, bulk
 * allocations, their preview and history, usage records, and the subscription's components. A 422
 * about an allocation's values has the service's allocation object shape, naming the component;
 * one about the subscription as a whole (not live) is a plain message list. The
 * commands take the top-level `uniqueness_token`: a repeat within the hour is a 409.
 */
export function registerAllocationRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/subscriptions/:id/components/:cid/allocations.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const componentId = await componentParam(c);
    const body = await readJsonBody(c);
    const input = { ...allocationWithPricePoint(body, componentId), ...uniquenessTokenOf(body) };
    const result = await c.var.site.allocations.allocate(id, componentId, input);
    return sendJson(201, allocationBody(result, await wireContext(c), result.payment));
  });

  // All or none, in order; the charges that do not accrue are collected in one payment, which each
  // allocation it paid for shows.
  app.post('/subscriptions/:id/allocations.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const body = await readJsonBody(c);
    const entries = allocationListWithPricePoints(body);
    const result = await c.var.site.allocations.allocateMany(id, entries, uniquenessTokenOf(body));
    const context = await wireContext(c);
    return sendJson(
      201,
      result.allocations.map((effect) => allocationBody(effect, context, collected(effect) ? result.payment : null)),
    );
  });

  app.post('/subscriptions/:id/allocations/preview.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const entries = allocationListWithPricePoints(await readJsonBody(c), { preview: true });
    // Each entry is previewed on its own against the current allocations, so a component listed
    // twice would be priced twice from the same start: refused rather than shown wrong.
    const seen = new Set<number>();
    const repeated = entries.filter((e) => seen.size === seen.add(e.componentId).size);
    if (repeated.length > 0) {
      throw validationError(
        repeated.map((e) => ({
          message: 'Component: can be previewed only once per request.',
          attribute: 'component_id',
          extra: { kind: 'allocation', component_id: e.componentId, on: 'component_id' },
        })),
        'objects',
      );
    }
    const site = c.var.site;
    const subscription = await site.subscriptions.get(id);
    const current = new Map(
      (await site.allocations.listComponents(id)).map((v) => [v.component.id, v.subscriptionComponent]),
    );
    const previewed: AllocationPreviewEntry[] = [];
    for (const input of entries) {
      const preview = await site.allocations.previewAllocation(id, input.componentId, input);
      const { component } = await site.components.get(input.componentId);
      previewed.push({
        input,
        preview,
        component,
        previousQuantity: current.get(input.componentId)?.allocatedQuantity ?? 0,
      });
    }
    return sendJson(200, serializeAllocationPreview(subscription, previewed, await wireContext(c)));
  });

  // Newest first, 50 a page: the service lists "the 50 most recent allocations, most recent first".
  app.get('/subscriptions/:id/components/:cid/allocations.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const componentId = await knownComponent(c);
    const page = allocationListQuery.parse(queryOf(c));
    const records = (await c.var.site.allocations.listAllocations(id, componentId)).reverse();
    const context = await wireContext(c);
    return sendJson(
      200,
      pageOf(records, page).map((record) => serializeAllocation(record, context)),
    );
  });

  app.post('/subscriptions/:id/components/:cid/usages.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const componentId = await componentParam(c);
    const body = await readJsonBody(c);
    const input = { ...parseWireRequest(usageRequest, body), ...uniquenessTokenOf(body) };
    const result = await c.var.site.allocations.recordUsage(id, componentId, input);
    return sendJson(201, serializeUsage(result.usage, await wireContext(c), result));
  });

  // Newest first, like the allocation history; `since_id` / `max_id` bound the ids.
  app.get('/subscriptions/:id/components/:cid/usages.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const componentId = await knownComponent(c);
    const query = parseWireParams(usageListQuery, queryOf(c), 'query');
    const usages = (await c.var.site.allocations.listUsages(id, componentId))
      .filter(
        (u) =>
          (query.sinceId === undefined || u.id >= query.sinceId) && (query.maxId === undefined || u.id <= query.maxId),
      )
      .reverse();
    const context = await wireContext(c);
    return sendJson(
      200,
      pageOf(usages, query).map((usage) => serializeUsage(usage, context)),
    );
  });

  // Every component of the subscription, by id. The SDK's filters of this list (price points,
  // dates, product families) have nothing to select on here, where a subscription has few components.
  app.get('/subscriptions/:id/components.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const views = await c.var.site.allocations.listComponents(id);
    return sendJson(200, await subscriptionComponentBodies(c, id, views));
  });

  // One component of the subscription; a component it does not have is not found here.
  app.get(`/subscriptions/:id/components/:cid${JSON_SEGMENT}`, async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const componentId = await componentParam(c);
    const view = (await c.var.site.allocations.listComponents(id)).find((v) => v.component.id === componentId);
    if (view === undefined) throw notFound('Component', componentId);
    return sendJson(200, (await subscriptionComponentBodies(c, id, [view]))[0]!);
  });
}
