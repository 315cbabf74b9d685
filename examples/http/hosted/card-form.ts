import type { AddressFields, CreditCardInput } from 'billing-engine';
import { html, type SafeHtml } from './html.js';

/** The card form's fields that may be shown again after an error: never the number or the CVV. */
export interface CardFormValues {
  readonly firstName?: string;
  readonly lastName?: string;
  readonly expirationMonth?: string;
  readonly expirationYear?: string;
}

/** What a posted card form asks for: the card for `updateCard`, and the values to show again. */
export interface CardFormInput {
  readonly card: CreditCardInput & { billingAddress?: Partial<AddressFields> };
  readonly values: CardFormValues;
}

/**
 * The card fields of a form, each with a visible label tied to it by `for`/`id` and the
 * `autocomplete` tokens browsers and password managers fill cards with. `idPrefix` keeps ids unique
 * when a page has several card forms (one per subscription in the portal).
 */
export function cardFields(idPrefix: string, values: CardFormValues = {}): SafeHtml {
  const id = (name: string) => `${idPrefix}-${name}`;
  return html`<fieldset>
<legend>Card details</legend>
<div class="row">
<div><label for="${id('first-name')}">First name on card</label>
<input id="${id('first-name')}" name="first_name" autocomplete="cc-given-name" value="${values.firstName ?? ''}"></div>
<div><label for="${id('last-name')}">Last name on card</label>
<input id="${id('last-name')}" name="last_name" autocomplete="cc-family-name" value="${values.lastName ?? ''}"></div>
</div>
<label for="${id('number')}">Card number</label>
<input id="${id('number')}" name="full_number" inputmode="numeric" autocomplete="cc-number" required>
<div class="row">
<div><label for="${id('month')}">Expiration month (MM)</label>
<input id="${id('month')}" name="expiration_month" inputmode="numeric" autocomplete="cc-exp-month" maxlength="2" required value="${values.expirationMonth ?? ''}"></div>
<div><label for="${id('year')}">Expiration year (YYYY)</label>
<input id="${id('year')}" name="expiration_year" inputmode="numeric" autocomplete="cc-exp-year" maxlength="4" required value="${values.expirationYear ?? ''}"></div>
<div><label for="${id('cvv')}">Security code (CVV)</label>
<input id="${id('cvv')}" name="cvv" inputmode="numeric" autocomplete="cc-csc" maxlength="4"></div>
</div>
</fieldset>`;
}

const ADDRESS_FIELDS: readonly (readonly [keyof AddressFields, string, string])[] = [
  ['address', 'billing_address', 'Street address'],
  ['city', 'billing_city', 'City'],
  ['state', 'billing_state', 'State or region'],
  ['zip', 'billing_zip', 'Postal code'],
  ['country', 'billing_country', 'Country (two-letter code)'],
];

/**
 * Optional billing address fields. A taxable product needs a complete billing address with the
 * card, so the hosted page offers them; left empty, the address on file is kept.
 */
export function billingAddressFields(idPrefix: string): SafeHtml {
  return html`<fieldset>
<legend>Billing address (optional; leave empty to keep the one on file)</legend>
${ADDRESS_FIELDS.map(
  ([, name, label]) => html`<label for="${`${idPrefix}-${name}`}">${label}</label>
<input id="${`${idPrefix}-${name}`}" name="${name}">`,
)}
</fieldset>`;
}

/**
 * Reads a posted card form. Missing fields become empty strings so that the engine's own
 * validation reports them in its words ("Credit card number: cannot be blank."); empty optional
 * fields are left out so that they never blank what is on file.
 */
export function readCardForm(form: URLSearchParams): CardFormInput {
  const text = (name: string) => (form.get(name) ?? '').trim();
  const optional = (name: string) => (text(name) === '' ? undefined : text(name));
  const billingAddress: Partial<Record<keyof AddressFields, string>> = {};
  for (const [key, name] of ADDRESS_FIELDS) {
    const value = optional(name);
    if (value !== undefined) billingAddress[key] = value;
  }
  const firstName = optional('first_name');
  const lastName = optional('last_name');
  const cvv = optional('cvv');
  const card: CardFormInput['card'] = {
    fullNumber: text('full_number'),
    expirationMonth: text('expiration_month'),
    expirationYear: text('expiration_year'),
    ...(cvv === undefined ? {} : { cvv }),
    ...(firstName === undefined ? {} : { firstName }),
    ...(lastName === undefined ? {} : { lastName }),
    ...(Object.keys(billingAddress).length === 0 ? {} : { billingAddress }),
  };
  return {
    card,
    values: {
      firstName: text('first_name'),
      lastName: text('last_name'),
      expirationMonth: text('expiration_month'),
      expirationYear: text('expiration_year'),
    },
  };
}
