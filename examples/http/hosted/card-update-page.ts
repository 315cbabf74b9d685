import type { SiteRecord, SubscriptionView } from 'billing-engine';
import { billingAddressFields, type CardFormValues, cardFields } from './card-form.js';
import { describeCard, describeState } from './display-format.js';
import { html, htmlPage, messageList } from './html.js';

/** What the hosted card update page shows. */
export interface CardUpdatePageInput {
  readonly site: SiteRecord;
  readonly view: SubscriptionView;
  /** The page's own path (with the token): the form posts back to it. */
  readonly action: string;
  /** Messages of a refused update. */
  readonly errors?: readonly string[];
  /** The fields to show again after a refused update (never the card number or CVV). */
  readonly values?: CardFormValues;
  /** True right after a successful update. */
  readonly updated?: boolean;
  readonly status?: number;
}

/**
 * The hosted self-service card update page (`/update_payment/{id}/{token}`): who and what the
 * subscription is, the card on file (type, last four, expiry), the outcome of a post, and a plain
 * form with labelled fields that posts back to the same URL. Works with no script.
 */
export function cardUpdatePage(input: CardUpdatePageInput): Response {
  const { view, site } = input;
  const customer = `${view.customer.firstName} ${view.customer.lastName}`.trim();
  const body = html`<h1>Update your payment details</h1>
<p class="muted">${site.name}</p>
${input.updated ? messageList('notice', 'Your card was updated.', [`New card: ${describeCard(view.paymentProfile)}.`]) : ''}
${messageList('error', 'Your card was not updated:', input.errors ?? [])}
<section aria-labelledby="subscription-heading">
<h2 id="subscription-heading">Subscription</h2>
<dl>
<dt>Customer</dt><dd>${customer}</dd>
<dt>Plan</dt><dd>${view.product.version.terms.name}</dd>
<dt>Status</dt><dd>${describeState(view.subscription.state)}</dd>
<dt>Card on file</dt><dd data-testid="card-on-file">${describeCard(view.paymentProfile)}</dd>
</dl>
</section>
<section aria-labelledby="card-heading">
<h2 id="card-heading">New card</h2>
<form method="post" action="${input.action}">
${cardFields('card', input.values)}
${billingAddressFields('card')}
<button type="submit">Update card</button>
</form>
</section>`;
  return htmlPage({ status: input.status ?? 200, title: `Update payment details - ${site.name}`, body });
}
