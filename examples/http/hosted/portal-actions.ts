import {
  type BulkAllocationInput,
  invalid,
  type SiteHandle,
  type SiteRecord,
  type SiteSettings,
  type SubscriptionView,
} from 'billing-engine';
import { readCardForm } from './card-form.js';
import { describeCard, formatDate } from './display-format.js';
import { planChoices, portalComponents } from './portal-data.js';

/** What a portal action needs: the site, the customer's subscription it acts on, and the posted form. */
export interface PortalActionInput {
  readonly site: SiteHandle;
  readonly record: SiteRecord;
  readonly view: SubscriptionView;
  readonly form: URLSearchParams;
}

/**
 * One action of the billing portal: the site setting that allows it, and what it does. `run`
 * returns the notice to show; an engine error it throws is shown as the error instead.
 */
export interface PortalAction {
  readonly setting: keyof SiteSettings['portal'];
  run(input: PortalActionInput): Promise<string[]>;
}

/**
 * Change plan: to another product of the same family, now and without proration
 * (`subscriptions.changeProduct`). The target is checked against the family here, so a forged
 * `product_id` of another family is refused in the page's words rather than moved to.
 */
const changePlan: PortalAction = {
  setting: 'allowPlanChange',
  async run({ site, view, form }) {
    const wanted = form.get('product_id') ?? '';
    const target = (await planChoices(site, view)).find((choice) => String(choice.product.id) === wanted);
    if (target === undefined) throw invalid('Plan: choose one of the plans offered.', 'product_id');
    await site.subscriptions.changeProduct(view.subscription.id, { productId: target.product.id });
    return [`Your plan is now ${target.version.terms.name}.`];
  },
};

/** Cancel at the end of the current period (never at once: the customer keeps what they paid for). */
const cancel: PortalAction = {
  setting: 'allowCancel',
  async run({ site, record, view, form }) {
    const reason = (form.get('reason') ?? '').trim().slice(0, 500);
    const updated = await site.subscriptions.cancel(view.subscription.id, {
      cancelAtEndOfPeriod: true,
      cancellationMethod: 'billing_portal',
      ...(reason === '' ? {} : { cancellationMessage: reason }),
    });
    const on = updated.subscription.delayedCancelAt ?? updated.subscription.currentPeriodEndsAt;
    return [
      `Your subscription will be cancelled at the end of the current period, on ${formatDate(on, record.timeZone)}.`,
    ];
  },
};

/** Undo a pending end-of-period cancellation; allowed wherever cancelling is. */
const undoCancel: PortalAction = {
  setting: 'allowCancel',
  async run({ site, view }) {
    await site.subscriptions.undoCancelAtEndOfPeriod(view.subscription.id);
    return ['Your subscription will continue.'];
  },
};

/** Replace the card (`subscriptions.updateCard`); the number never goes into the notice or a cookie. */
const updateCard: PortalAction = {
  setting: 'allowCardUpdate',
  async run({ site, view, form }) {
    const updated = await site.subscriptions.updateCard(view.subscription.id, readCardForm(form).card);
    return [`Your card was updated: ${describeCard(updated.paymentProfile)}.`];
  },
};

/**
 * Change component quantities: one `allocateMany` for the fields whose value differs from the
 * current quantity (all applied or none). Only the family's components are read from the form;
 * any other `quantity[...]` field is ignored. The engine validates the values (whole numbers; 0 or
 * 1 for on/off). A charge it could not collect stays on the balance, which the notice says.
 */
const allocate: PortalAction = {
  setting: 'allowComponentChange',
  async run({ site, view, form }) {
    const changes: BulkAllocationInput[] = [];
    for (const { component, quantity } of await portalComponents(site, view)) {
      const posted = form.get(`quantity[${component.id}]`);
      if (posted === null || posted.trim() === '' || posted.trim() === String(quantity)) continue;
      changes.push({ componentId: component.id, quantity: posted.trim(), memo: 'Changed in the billing portal' });
    }
    if (changes.length === 0) return ['Nothing to change: the quantities are as they were.'];
    const result = await site.allocations.allocateMany(view.subscription.id, changes);
    const notice = ['Your add-ons were updated.'];
    if (result.payment !== null && result.payment.status !== 'succeeded') {
      notice.push('The charge for the change could not be collected now; it will be added to your next bill.');
    }
    return notice;
  },
};

const ACTIONS: Readonly<Record<string, PortalAction>> = {
  change_plan: changePlan,
  cancel,
  undo_cancel: undoCancel,
  update_card: updateCard,
  allocate,
};

/** The portal action of a URL's last segment (`change_plan`, `cancel`, `undo_cancel`, `update_card`, `allocate`). */
export function portalAction(name: string): PortalAction | undefined {
  return Object.hasOwn(ACTIONS, name) ? ACTIONS[name] : undefined;
}
