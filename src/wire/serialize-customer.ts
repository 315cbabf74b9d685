import type { CustomerRecord } from '../ports/storage.js';
import { type WireContext, wireTimestamp } from './wire-context.js';

/** A customer as the service writes it (inside `{"customer":{...}}`), address fields flat. */
export interface CustomerJson {
  readonly id: number;
  readonly first_name: string;
  readonly last_name: string;
  readonly email: string;
  readonly reference: string | null;
  readonly organization: string | null;
  readonly phone: string | null;
  readonly address: string | null;
  readonly address_2: string | null;
  readonly city: string | null;
  readonly state: string | null;
  readonly zip: string | null;
  readonly country: string | null;
  readonly created_at: string | null;
  readonly updated_at: string | null;
}

/** The fields of a customer, unwrapped (also nested in a subscription). */
export function customerJson(customer: CustomerRecord, context: WireContext): CustomerJson {
  return {
    id: customer.id,
    first_name: customer.firstName,
    last_name: customer.lastName,
    email: customer.email,
    reference: customer.reference,
    organization: customer.organization,
    phone: customer.phone,
    address: customer.address.address,
    address_2: customer.address.address2,
    city: customer.address.city,
    state: customer.address.state,
    zip: customer.address.zip,
    country: customer.address.country,
    created_at: wireTimestamp(customer.createdAt, context),
    updated_at: wireTimestamp(customer.updatedAt, context),
  };
}

/** `{"customer":{...}}`, the body of a customer create or read. */
export function serializeCustomer(customer: CustomerRecord, context: WireContext): { customer: CustomerJson } {
  return { customer: customerJson(customer, context) };
}
