import { type BillingError, type PaymentProfileRecord, type ProductTerms, toMajorString } from 'billing-engine';

/**
 * An amount in minor units as a customer reads it, `USD 10.00`: the currency code and the exact
 * major-unit string of the engine (never a float), so JPY and KWD get their own digits.
 */
export function formatMoney(amountInCents: number, currency: string): string {
  return `${currency} ${toMajorString(amountInCents, currency)}`;
}

/** A product's price and interval, `USD 10.00 every month` / `USD 90.00 every 3 months`. */
export function describePrice(terms: ProductTerms, currency: string): string {
  const unit = terms.interval === 1 ? terms.intervalUnit : `${terms.interval} ${terms.intervalUnit}s`;
  return `${formatMoney(terms.priceInCents, currency)} every ${unit}`;
}

/** A calendar date in the site's time zone (`January 15, 2026`): the customer's billing day is the site's. */
export function formatDate(instant: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeZone }).format(instant);
}

// The service's `card_type` spellings, as a customer knows the brands.
const CARD_BRANDS: Readonly<Record<string, string>> = {
  visa: 'Visa',
  master: 'Mastercard',
  american_express: 'American Express',
  discover: 'Discover',
  jcb: 'JCB',
  diners_club: 'Diners Club',
  bogus: 'Test card',
};

/** The card on file as it may be shown: brand, last four and expiry, never more. */
export function describeCard(profile: PaymentProfileRecord | null): string {
  if (profile === null) return 'No card on file';
  const brand = Object.hasOwn(CARD_BRANDS, profile.cardType) ? CARD_BRANDS[profile.cardType] : profile.cardType;
  const month = String(profile.expirationMonth).padStart(2, '0');
  return `${brand} ending in ${profile.lastFour}, expires ${month}/${profile.expirationYear}`;
}

/** The messages of an engine error for a page: one per detail, or the error's message. */
export function errorMessages(error: BillingError): string[] {
  const messages = error.details.map((detail) => detail.message).filter((message) => message !== '');
  return messages.length > 0 ? messages : [error.message];
}

/** A subscription state as words (`past_due` → `past due`). */
export function describeState(state: string): string {
  return state.replace(/_/g, ' ');
}
