import {
  type ComponentRecord,
  type CustomerRecord,
  LIVE_STATES,
  nextState,
  type ProductView,
  type SiteRecord,
  type SubscriptionView,
} from 'billing-engine';
import type { InvoiceRecord } from '../../../src/invoices/model.js';
import { cardFields } from './card-form.js';
import { describeCard, describePrice, describeState, formatDate } from './display-format.js';
import { html, htmlPage, messageList, type SafeHtml } from './html.js';
import { invoiceList } from './portal-invoices.js';

/** A component the customer may allocate on the portal, with the subscription's current quantity. */
export interface PortalComponent {
  readonly component: ComponentRecord;
  readonly quantity: number;
}

/** One subscription as the portal shows it, with what it may change to. */
export interface PortalSubscription {
  readonly view: SubscriptionView;
  /** The other products of the subscription's family (plan change targets). */
  readonly plans: readonly ProductView[];
  /** The family's quantity-based and on/off components. */
  readonly components: readonly PortalComponent[];
  /** The subscription's issued invoices, newest first; each links to its PDF under the portal link. */
  readonly invoices: readonly InvoiceRecord[];
}

/** A one-time message shown after an action redirected back to the portal. */
export interface PortalFlash {
  readonly kind: 'notice' | 'error';
  readonly messages: readonly string[];
}

/** What the portal page shows. */
export interface PortalPageInput {
  readonly site: SiteRecord;
  readonly customer: CustomerRecord;
  readonly subscriptions: readonly PortalSubscription[];
  /** The signed link's path; actions post to `{basePath}/{action}`. */
  readonly basePath: string;
  readonly flash?: PortalFlash;
}

/**
 * The billing portal page: the customer's subscriptions, each with the actions the site allows
 * (`portal.allowPlanChange`, `allowComponentChange`, `allowCardUpdate`, `allowCancel`) as plain
 * forms that post to `{basePath}/{action}`. Actions the site does not allow are not offered (and
 * are refused with 403 if posted anyway). Each subscription lists its invoices with a PDF link
 * under the portal link (`{basePath}/invoices/{uid}.pdf`). Works with no script.
 */
export function portalPage(input: PortalPageInput): Response {
  const { site, customer } = input;
  const name = `${customer.firstName} ${customer.lastName}`.trim();
  const flash = input.flash;
  const body = html`<h1>Manage your subscriptions</h1>
<p class="muted">${site.name} · ${name} (${customer.email})</p>
${flash === undefined ? '' : messageList(flash.kind, flash.kind === 'error' ? 'That did not work:' : 'Done.', flash.messages)}
${
  input.subscriptions.length === 0
    ? html`<div class="panel"><p>You have no subscriptions.</p></div>`
    : input.subscriptions.map((entry) => subscriptionSection(input, entry))
}`;
  return htmlPage({ title: `Billing portal - ${site.name}`, body });
}

function subscriptionSection(input: PortalPageInput, entry: PortalSubscription): SafeHtml {
  const { site } = input;
  const { subscription, product, paymentProfile } = entry.view;
  const allowed = site.settings.portal;
  const live = LIVE_STATES.includes(subscription.state);
  const headingId = `subscription-${subscription.id}`;
  const hidden = html`<input type="hidden" name="subscription_id" value="${subscription.id}">`;
  const action = (name: string) => `${input.basePath}/${name}`;

  const details = html`<dl>
<dt>Status</dt><dd data-testid="state-${subscription.id}">${describeState(subscription.state)}</dd>
<dt>Price</dt><dd>${describePrice(product.version.terms, site.currency)}</dd>
${subscription.nextAssessmentAt && !subscription.cancelAtEndOfPeriod ? html`<dt>Next billing</dt><dd>${formatDate(subscription.nextAssessmentAt, site.timeZone)}</dd>` : ''}
${subscription.cancelAtEndOfPeriod && subscription.delayedCancelAt ? html`<dt>Cancels on</dt><dd data-testid="cancels-on-${subscription.id}">${formatDate(subscription.delayedCancelAt, site.timeZone)}</dd>` : ''}
<dt>Card</dt><dd>${describeCard(paymentProfile)}</dd>
</dl>`;

  const planForm =
    allowed.allowPlanChange && live && entry.plans.length > 0
      ? html`<form method="post" action="${action('change_plan')}">
${hidden}
<fieldset><legend>Change plan</legend>
${entry.plans.map(
  (plan) =>
    html`<label class="choice"><input type="radio" name="product_id" value="${plan.product.id}" required>${plan.version.terms.name} (${describePrice(plan.version.terms, site.currency)})</label>`,
)}
</fieldset>
<button type="submit">Change plan</button>
</form>`
      : '';

  const componentForm =
    allowed.allowComponentChange && live && entry.components.length > 0
      ? html`<form method="post" action="${action('allocate')}">
${hidden}
<fieldset><legend>Add-ons</legend>
${entry.components.map((item) => componentField(subscription.id, item))}
</fieldset>
<button type="submit">Update add-ons</button>
</form>`
      : '';

  const cardForm =
    allowed.allowCardUpdate && live
      ? html`<details><summary>Update card</summary>
<form method="post" action="${action('update_card')}">
${hidden}
${cardFields(`card-${subscription.id}`)}
<button type="submit">Update card</button>
</form></details>`
      : '';

  let cancelForm: SafeHtml | string = '';
  if (allowed.allowCancel && subscription.cancelAtEndOfPeriod) {
    cancelForm = html`<form method="post" action="${action('undo_cancel')}">
${hidden}
<fieldset><legend>Cancellation</legend>
<p>This subscription ends when the current period ends. Changed your mind?</p>
</fieldset>
<button type="submit" class="secondary">Keep my subscription</button>
</form>`;
  } else if (allowed.allowCancel && nextState(subscription.state, 'delayed_cancel') !== undefined) {
    cancelForm = html`<form method="post" action="${action('cancel')}">
${hidden}
<fieldset><legend>Cancel subscription</legend>
<p class="muted">You keep what you have paid for until the end of the current period.</p>
<label for="reason-${subscription.id}">Reason for cancelling (optional)</label>
<textarea id="reason-${subscription.id}" name="reason" rows="2" maxlength="500"></textarea>
</fieldset>
<button type="submit" class="danger">Cancel at end of period</button>
</form>`;
  }

  return html`<section aria-labelledby="${headingId}">
<h2 id="${headingId}">${product.version.terms.name}</h2>
${details}
${planForm}
${componentForm}
${cardForm}
${cancelForm}
${invoiceList(subscription.id, input.basePath, entry.invoices)}
</section>`;
}

function componentField(subscriptionId: number, item: PortalComponent): SafeHtml {
  const { component, quantity } = item;
  const id = `component-${subscriptionId}-${component.id}`;
  const name = `quantity[${component.id}]`;
  if (component.kind === 'on_off_component') {
    return html`<label for="${id}">${component.name}</label>
<select id="${id}" name="${name}">
<option value="0"${quantity === 0 ? html` selected` : ''}>Off</option>
<option value="1"${quantity === 1 ? html` selected` : ''}>On</option>
</select>`;
  }
  return html`<label for="${id}">${component.name} (${component.unitName})</label>
<input id="${id}" name="${name}" type="number" min="0" step="1" inputmode="numeric" value="${quantity}">`;
}
