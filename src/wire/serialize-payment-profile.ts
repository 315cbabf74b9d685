import type { PaymentProfileRecord } from '../ports/storage.js';
import { type CreditCardJson, creditCardJson } from './serialize-credit-card.js';

/**
 * `{"payment_profile":{...}}`, the body of a payment profile update. The SDK requires
 * `payment_profile.payment_type` here, which the card fields carry.
 */
export function serializePaymentProfile(profile: PaymentProfileRecord): { payment_profile: CreditCardJson } {
  return { payment_profile: creditCardJson(profile) };
}
