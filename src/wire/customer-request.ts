import { z } from 'zod';
import type { AddressFields } from '../ports/storage.js';
import type { CustomerInput } from '../services/customer-service.js';
import { defineWireRequest } from './wire-request.js';
import { wireText } from './wire-scalars.js';

/**
 * The fields of a customer (`{"customer":{...}}` and a subscription's `customer_attributes`),
 * read into a {@link CustomerInput}. Address fields use the service's flat names
 * (`address`, `address_2`, `city`, `state`, `zip`, `country`).
 */
export const customerFields = z
  .object(
    {
      first_name: wireText.nullish(),
      last_name: wireText.nullish(),
      email: wireText.nullish(),
      reference: wireText.nullish(),
      organization: wireText.nullish(),
      phone: wireText.nullish(),
      address: wireText.nullish(),
      address_2: wireText.nullish(),
      city: wireText.nullish(),
      state: wireText.nullish(),
      zip: wireText.nullish(),
      country: wireText.nullish(),
    },
    { error: 'must be an object.' },
  )
  .transform((c): CustomerInput => {
    const address: { -readonly [K in keyof AddressFields]?: AddressFields[K] } = {};
    if (c.address !== undefined) address.address = c.address;
    if (c.address_2 !== undefined) address.address2 = c.address_2;
    if (c.city !== undefined) address.city = c.city;
    if (c.state !== undefined) address.state = c.state;
    if (c.zip !== undefined) address.zip = c.zip;
    if (c.country !== undefined) address.country = c.country;
    return {
      // Blank or missing names and email are the engine's to report, with its messages.
      ...(c.first_name == null ? {} : { firstName: c.first_name }),
      ...(c.last_name == null ? {} : { lastName: c.last_name }),
      ...(c.email == null ? {} : { email: c.email }),
      ...(c.reference === undefined ? {} : { reference: c.reference }),
      ...(c.organization === undefined ? {} : { organization: c.organization }),
      ...(c.phone === undefined ? {} : { phone: c.phone }),
      ...(Object.keys(address).length === 0 ? {} : { address }),
    };
  });

/** `POST /customers.json`: body `{"customer":{first_name, last_name, email, reference?, organization?, ...}}`. */
export const customerRequest = defineWireRequest('customer', customerFields);
