/**
 * The history of each subscription's MRR, written going forward: after a command's work and
 * before its events are appended, each subscription its events concern has its MRR computed in
 * the command's transaction (as `GET /mrr.json` computes it) and, when that differs from the MRR
 * its last movement left (none: 0), one movement is inserted with the command's instant. A
 * rolled-back command leaves none, since the movement is in its transaction.
 */
import type { BillingEvent, EventKey } from '../events.js';
import type {
  MrrMovementCategory,
  MrrMovementLineItem,
  MrrMovementRecord,
  MrrSubscriptionInput,
  StorageTransaction,
  SubscriptionRecord,
} from '../ports/storage.js';
import { couponCache, MRR_STATES, type MrrLine, subscriptionMrrLines } from './mrr-computation.js';

/** Event keys that only tell about a subscription and never come with a change of what it bills. */
const NOTICE_KEYS: ReadonlySet<string> = new Set<EventKey>([
  'expiring_card',
  'upcoming_renewal_notice',
  'trial_end_notice',
  'subscription_card_update',
]);

/**
 * Event keys of a subscription's creation: its history starts with it. Any other event of a
 * subscription that has no movement yet means it is older than the history (migration 22).
 */
const CREATION_KEYS: ReadonlySet<string> = new Set<EventKey>(['signup_success']);

/** The part of an event the recorder reads (a subscription a command marked is one too). */
export type MrrSubject = Pick<BillingEvent, 'siteId' | 'subjectType' | 'subjectId'> & { readonly key: string };

/**
 * Records the MRR movements of the subscriptions that `events` (one command's, not yet appended)
 * concern: subscription events other than notices, each subscription once. Returns the movements
 * inserted.
 */
export async function recordMrrMovements(
  tx: StorageTransaction,
  events: readonly MrrSubject[],
  now: Date,
): Promise<MrrMovementRecord[]> {
  const subjects = new Map<string, { siteId: number; subscriptionId: number; created: boolean }>();
  for (const event of events) {
    if (event.subjectType !== 'subscription' || NOTICE_KEYS.has(event.key)) continue;
    const key = `${event.siteId}:${event.subjectId}`;
    const subject = subjects.get(key) ?? { siteId: event.siteId, subscriptionId: event.subjectId, created: false };
    if (CREATION_KEYS.has(event.key)) subject.created = true;
    subjects.set(key, subject);
  }
  const inserted: MrrMovementRecord[] = [];
  for (const { siteId, subscriptionId, created } of subjects.values()) {
    const movement = await recordOne(tx, siteId, subscriptionId, now, created);
    if (movement !== undefined) inserted.push(movement);
  }
  return inserted;
}

async function recordOne(
  tx: StorageTransaction,
  siteId: number,
  subscriptionId: number,
  now: Date,
  created: boolean,
): Promise<MrrMovementRecord | undefined> {
  const subscription = await tx.subscriptions.findById(siteId, subscriptionId);
  if (subscription === undefined) return undefined;
  const last = await tx.mrrMovements.findLast(siteId, subscriptionId);
  const billable = MRR_STATES.includes(subscription.state);
  // With no history, a subscription that was not just created is older than the history: what
  // it bills now is where its history starts (a baseline, not listed), since what it billed
  // before this command is unknown. A signup that bills no MRR yet (a free trial) starts it at 0,
  // so that its conversion is new business.
  const baseline = last === undefined && (!created || !billable);
  // Out of the billable states with MRR 0 on record (a trial, a cancelled trial): nothing to read.
  if (!baseline && !billable && (last === undefined || last.mrrInCents === 0)) return undefined;
  const site = await tx.sites.findById(siteId);
  if (site === undefined) return undefined;
  const input = await mrrInputOf(tx, subscription);
  if (input === undefined) return undefined;
  const computed = subscriptionMrrLines(input, await couponCache(tx, siteId)(input), site.currency);
  const plan = billable ? computed.mrr.planAmountInCents : 0;
  const usage = billable ? computed.mrr.usageAmountInCents : 0;
  if (baseline) {
    await tx.mrrMovements.insert({
      siteId,
      subscriptionId,
      occurredAt: now,
      category: 'baseline',
      amountInCents: 0,
      planAmountInCents: 0,
      usageAmountInCents: 0,
      mrrInCents: plan + usage,
      planMrrInCents: plan,
      usageMrrInCents: usage,
      subscriberName: '',
      lineItems: await lineItemsOf(
        tx,
        subscription,
        await lineDetailsOf(tx, subscription),
        billable ? computed.lines : [],
        undefined,
        computed.lines,
      ),
    });
    return undefined;
  }
  const previous = {
    total: last?.mrrInCents ?? 0,
    plan: last?.planMrrInCents ?? 0,
    usage: last?.usageMrrInCents ?? 0,
  };
  if (plan + usage === previous.total) return undefined;
  const category = categoryOf(last, previous.total, plan + usage, billable);
  const details = await lineDetailsOf(tx, subscription);
  const lineItems = await lineItemsOf(tx, subscription, details, billable ? computed.lines : [], last, computed.lines);
  return tx.mrrMovements.insert({
    siteId,
    subscriptionId,
    occurredAt: now,
    category,
    amountInCents: plan + usage - previous.total,
    planAmountInCents: plan - previous.plan,
    usageAmountInCents: usage - previous.usage,
    mrrInCents: plan + usage,
    planMrrInCents: plan,
    usageMrrInCents: usage,
    subscriberName: await subscriberName(tx, subscription),
    lineItems,
  });
}

/**
 * The category of a change from `before` to `after` (they differ): the first MRR is new business;
 * leaving the billable states is churn; MRR again after a churn is a reactivation; otherwise a
 * rise is an expansion and a fall a contraction (to 0 too, while the subscription stays billable).
 */
function categoryOf(
  last: MrrMovementRecord | undefined,
  before: number,
  after: number,
  billable: boolean,
): MrrMovementCategory {
  if (!billable) return 'churn';
  if (last === undefined || (last.category === 'baseline' && before === 0)) return 'new_business';
  if (last.category === 'churn' && before === 0) return 'reactivation';
  return after > before ? 'expansion' : 'contraction';
}

/**
 * What MRR is computed from, read by the report's own reader (`listMrrInputs`, two statements
 * whatever the number of components), so that a movement and `GET /mrr.json` can never read it
 * differently.
 */
async function mrrInputOf(
  tx: StorageTransaction,
  subscription: SubscriptionRecord,
): Promise<MrrSubscriptionInput | undefined> {
  const [input] = await tx.reports.listMrrInputs(
    subscription.siteId,
    { states: [subscription.state], subscriptionIds: [subscription.id] },
    'asc',
    { page: 1, perPage: 1 },
  );
  return input;
}

/**
 * The names and versions a movement's lines are shown with, read only when a movement is written
 * (an unchanged MRR, the common case on a renewal, needs none of it).
 */
async function lineDetailsOf(tx: StorageTransaction, subscription: SubscriptionRecord): Promise<LineDetails> {
  const { siteId } = subscription;
  const version = await tx.catalog.findProductVersion(siteId, subscription.productId, subscription.productVersion);
  const componentInfo = new Map<number, { name: string; version: number }>();
  for (const row of await tx.subscriptionComponents.listForSubscription(siteId, subscription.id)) {
    const component = await tx.components.findById(siteId, row.componentId);
    if (component !== undefined)
      componentInfo.set(row.componentId, { name: component.name, version: row.componentVersion });
  }
  return { productName: version?.terms.name ?? '', pricePointId: version?.pricePointId ?? null, componentInfo };
}

/** What {@link lineDetailsOf} reads: the names and versions a movement's lines are shown with. */
interface LineDetails {
  readonly productName: string;
  readonly pricePointId: number | null;
  readonly componentInfo: ReadonlyMap<number, { readonly name: string; readonly version: number }>;
}

/**
 * The subscription's lines at the movement: its product and components with a positive quantity
 * (`configuration`, whose MRR is `lines`, or 0 each when churned), then the lines of the last
 * movement that are gone (a component taken to 0), at 0.
 */
async function lineItemsOf(
  tx: StorageTransaction,
  subscription: SubscriptionRecord,
  input: LineDetails,
  lines: readonly MrrLine[],
  last: MrrMovementRecord | undefined,
  configuration: readonly MrrLine[],
): Promise<MrrMovementLineItem[]> {
  const { siteId } = subscription;
  const before = new Map((last?.lineItems ?? []).map((line) => [line.componentId, line]));
  const mrrOf = new Map(lines.map((line) => [line.componentId ?? 0, line.mrrInCents]));
  const out: MrrMovementLineItem[] = [];
  for (const line of configuration) {
    const componentId = line.componentId ?? 0;
    const previous = before.get(componentId);
    before.delete(componentId);
    let name = input.productName;
    let pricePointId = input.pricePointId;
    const info = line.componentId === null ? undefined : input.componentInfo.get(line.componentId);
    if (line.componentId !== null) {
      name = info?.name ?? previous?.name ?? '';
      const pricePoint =
        info === undefined
          ? undefined
          : await tx.pricePoints.findComponentVersionPricePoint(siteId, line.componentId, info.version);
      pricePointId = pricePoint?.id ?? null;
    }
    const mrrInCents = mrrOf.get(componentId) ?? 0;
    out.push({
      productId: subscription.productId,
      componentId,
      pricePointId,
      name,
      mrrInCents,
      movementInCents: mrrInCents - (previous?.mrrInCents ?? 0),
      quantity: line.quantity,
      prevQuantity: previous?.quantity ?? 0,
      recurring: line.recurring,
    });
  }
  for (const gone of before.values()) {
    out.push({
      ...gone,
      mrrInCents: 0,
      movementInCents: -gone.mrrInCents,
      quantity: 0,
      prevQuantity: gone.quantity,
    });
  }
  return out;
}

/** The customer's name ("First Last"), or the organization when the name is blank. */
async function subscriberName(tx: StorageTransaction, subscription: SubscriptionRecord): Promise<string> {
  const customer = await tx.customers.findById(subscription.siteId, subscription.customerId);
  if (customer === undefined) return '';
  const name = `${customer.firstName} ${customer.lastName}`.trim();
  return name !== '' ? name : (customer.organization ?? '');
}
