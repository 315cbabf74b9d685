import { z } from 'zod';
import type { AddressFields } from '../ports/storage.js';
import type { CreatePaymentProfileInput } from '../services/payment-profile-service.js';
import type { CreditCardInput, PaymentProfileImport } from '../services/subscription-service.js';
import { defineWireRequest } from './wire-request.js';
import { wireCardExpiry, wireCardNumber, wireId, wireText } from './wire-scalars.js';

/** A card as the engine's signup and card-update commands take it, with an optional billing address. */
export type WireCardInput = CreditCardInput & { readonly billingAddress?: Partial<AddressFields> };

/** A partial card change (`PUT /payment_profiles/{id}.json`): only the given fields change. */
export type WirePaymentProfileInput = Partial<CreditCardInput> & { readonly billingAddress?: Partial<AddressFields> };

const cardShape = {
  full_number: wireCardNumber.nullish(),
  expiration_month: wireCardExpiry.nullish(),
  expiration_year: wireCardExpiry.nullish(),
  cvv: wireText.nullish(),
  first_name: wireText.nullish(),
  last_name: wireText.nullish(),
  billing_address: wireText.nullish(),
  billing_address_2: wireText.nullish(),
  billing_city: wireText.nullish(),
  billing_state: wireText.nullish(),
  billing_zip: wireText.nullish(),
  billing_country: wireText.nullish(),
};

type CardFields = { [K in keyof typeof cardShape]?: string | number | null | undefined };

function billingAddressOf(c: CardFields): { billingAddress?: Partial<AddressFields> } {
  const address: { -readonly [K in keyof AddressFields]?: AddressFields[K] } = {};
  const text = (v: string | number | null | undefined) => (v === undefined ? undefined : v === null ? null : String(v));
  const pairs: [keyof AddressFields, string | null | undefined][] = [
    ['address', text(c.billing_address)],
    ['address2', text(c.billing_address_2)],
    ['city', text(c.billing_city)],
    ['state', text(c.billing_state)],
    ['zip', text(c.billing_zip)],
    ['country', text(c.billing_country)],
  ];
  for (const [key, value] of pairs) if (value !== undefined) address[key] = value;
  return Object.keys(address).length === 0 ? {} : { billingAddress: address };
}

/**
 * The fields of `credit_card_attributes` (signup and card update), read into a
 * {@link WireCardInput}. Expiry may be a number or a string (the SDK passes the caller's type
 * through); a missing number or expiry is handed on blank so that the engine
 * reports it with its published message ("Credit card expiration month: cannot be blank.").
 */
export const creditCardAttributesFields = z.object(cardShape, { error: 'must be an object.' }).transform(
  (c): WireCardInput => ({
    fullNumber: c.full_number ?? '',
    expirationMonth: c.expiration_month ?? '',
    expirationYear: c.expiration_year ?? '',
    ...(c.cvv == null ? {} : { cvv: c.cvv }),
    ...(c.first_name == null ? {} : { firstName: c.first_name }),
    ...(c.last_name == null ? {} : { lastName: c.last_name }),
    ...billingAddressOf(c),
  }),
);

/**
 * The fields of `{"payment_profile":{...}}` (the update form), read into a
 * {@link WirePaymentProfileInput}: unlike a card on signup, anything left out keeps its value.
 */
export const paymentProfileFields = z.object(cardShape, { error: 'must be an object.' }).transform(
  (c): WirePaymentProfileInput => ({
    ...(c.full_number == null ? {} : { fullNumber: c.full_number }),
    ...(c.expiration_month == null ? {} : { expirationMonth: c.expiration_month }),
    ...(c.expiration_year == null ? {} : { expirationYear: c.expiration_year }),
    ...(c.cvv == null ? {} : { cvv: c.cvv }),
    ...(c.first_name == null ? {} : { firstName: c.first_name }),
    ...(c.last_name == null ? {} : { lastName: c.last_name }),
    ...billingAddressOf(c),
  }),
);

/** `PUT /payment_profiles/{id}.json`: body `{"payment_profile":{full_number?, expiration_month?, ...}}`. */
export const paymentProfileRequest = defineWireRequest('payment_profile', paymentProfileFields);

/**
 * The fields of `payment_profile_attributes` on signup (the import form): a
 * card already stored at a vault, identified by its token; nothing is sent to the gateway.
 */
export const paymentProfileImportFields = z
  .object(
    {
      vault_token: wireText.nullish(),
      customer_vault_token: wireText.nullish(),
      current_vault: wireText.nullish(),
      expiration_month: wireCardExpiry.nullish(),
      expiration_year: wireCardExpiry.nullish(),
      card_type: wireText.nullish(),
      last_four: wireText.nullish(),
      first_name: wireText.nullish(),
      last_name: wireText.nullish(),
    },
    { error: 'must be an object.' },
  )
  .transform(
    (p): PaymentProfileImport => ({
      vaultToken: p.vault_token ?? '',
      expirationMonth: p.expiration_month ?? '',
      expirationYear: p.expiration_year ?? '',
      ...(p.customer_vault_token == null ? {} : { customerVaultToken: p.customer_vault_token }),
      ...(p.current_vault == null ? {} : { currentVault: p.current_vault }),
      ...(p.card_type == null ? {} : { cardType: p.card_type }),
      ...(p.last_four == null ? {} : { lastFour: p.last_four }),
      ...(p.first_name == null ? {} : { firstName: p.first_name }),
      ...(p.last_name == null ? {} : { lastName: p.last_name }),
    }),
  );

/** Bank account fields of the service's create form; their presence makes a bank account profile. */
const BANK_FIELDS = [
  'bank_name',
  'bank_iban',
  'bank_routing_number',
  'bank_account_number',
  'bank_branch_code',
  'bank_account_type',
  'bank_account_holder_type',
] as const;

/**
 * The fields of `{"payment_profile":{...}}` on create (`POST /payment_profiles.json`), read into a
 * {@link CreatePaymentProfileInput}: `customer_id`, and a card (`full_number`, expiry, `cvv`), a
 * vault import (`vault_token`, `customer_vault_token`, `current_vault`, `card_type`, `last_four`)
 * or a `chargify_token`; names and `billing_*`. Bank fields are passed on as a `bank_account`
 * payment type for the engine to refuse with its message; unknown keys are ignored.
 */
export const createPaymentProfileFields = z
  .object(
    {
      ...cardShape,
      customer_id: wireId.nullish(),
      payment_type: wireText.nullish(),
      vault_token: wireText.nullish(),
      customer_vault_token: wireText.nullish(),
      current_vault: wireText.nullish(),
      card_type: wireText.nullish(),
      last_four: wireText.nullish(),
      chargify_token: wireText.nullish(),
      ...Object.fromEntries(BANK_FIELDS.map((k) => [k, z.unknown().optional()])),
    },
    { error: 'must be an object.' },
  )
  .transform((p): CreatePaymentProfileInput => {
    const record = p as Record<string, unknown>;
    const bank = BANK_FIELDS.some((k) => record[k] !== undefined && record[k] !== null && record[k] !== '');
    const paymentType = p.payment_type ?? (bank ? 'bank_account' : undefined);
    return {
      ...(p.customer_id == null ? {} : { customerId: p.customer_id }),
      ...(paymentType == null ? {} : { paymentType }),
      ...(p.full_number == null ? {} : { fullNumber: p.full_number }),
      ...(p.expiration_month == null ? {} : { expirationMonth: p.expiration_month }),
      ...(p.expiration_year == null ? {} : { expirationYear: p.expiration_year }),
      ...(p.cvv == null ? {} : { cvv: p.cvv }),
      ...(p.first_name == null ? {} : { firstName: p.first_name }),
      ...(p.last_name == null ? {} : { lastName: p.last_name }),
      ...(p.vault_token == null ? {} : { vaultToken: p.vault_token }),
      ...(p.customer_vault_token == null ? {} : { customerVaultToken: p.customer_vault_token }),
      ...(p.current_vault == null ? {} : { currentVault: p.current_vault }),
      ...(p.card_type == null ? {} : { cardType: p.card_type }),
      ...(p.last_four == null ? {} : { lastFour: p.last_four }),
      ...(p.chargify_token == null ? {} : { chargifyToken: p.chargify_token }),
      ...billingAddressOf(p),
    };
  });

/** `POST /payment_profiles.json`: body `{"payment_profile":{customer_id, ...}}`. */
export const createPaymentProfileRequest = defineWireRequest('payment_profile', createPaymentProfileFields);
