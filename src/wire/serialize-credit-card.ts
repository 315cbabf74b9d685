import type { PaymentProfileRecord } from '../ports/storage.js';

/**
 * A stored card as the service writes it (`credit_card` of a subscription). `payment_type` is
 * always present because the official SDK rejects a `credit_card` object without it;
 * the number is only ever the masked form ending in the last four digits.
 */
export interface CreditCardJson {
  readonly id: number;
  readonly payment_type: 'credit_card';
  readonly masked_card_number: string;
  readonly card_type: string;
  readonly expiration_month: number;
  readonly expiration_year: number;
  readonly first_name: string | null;
  readonly last_name: string | null;
  readonly current_vault: string;
  readonly vault_token: string;
  readonly customer_vault_token: string | null;
  readonly customer_id: number;
  readonly billing_address: string | null;
  readonly billing_address_2: string | null;
  readonly billing_city: string | null;
  readonly billing_state: string | null;
  readonly billing_zip: string | null;
  readonly billing_country: string | null;
}

/** The fields of a stored card (payment profile). */
export function creditCardJson(profile: PaymentProfileRecord): CreditCardJson {
  return {
    id: profile.id,
    payment_type: profile.paymentType,
    masked_card_number: `XXXX-XXXX-XXXX-${profile.lastFour}`,
    card_type: profile.cardType,
    expiration_month: profile.expirationMonth,
    expiration_year: profile.expirationYear,
    first_name: profile.firstName,
    last_name: profile.lastName,
    current_vault: profile.currentVault,
    vault_token: profile.vaultToken,
    customer_vault_token: profile.customerVaultToken,
    customer_id: profile.customerId,
    billing_address: profile.billingAddress.address,
    billing_address_2: profile.billingAddress.address2,
    billing_city: profile.billingAddress.city,
    billing_state: profile.billingAddress.state,
    billing_zip: profile.billingAddress.zip,
    billing_country: profile.billingAddress.country,
  };
}
