import { z } from 'zod';
import type { ComponentKind, PricingScheme } from '../ports/storage.js';
import type { ComponentInput, ComponentUpdateInput } from '../services/component-service.js';
import { defineWireRequest, type WireRequest } from './wire-request.js';
import { wireBoolean, wireDecimal, wireText } from './wire-scalars.js';

// Bracket values pass through unchanged: the engine's pricing parser has the messages for them.
const priceBracket = z
  .object(
    {
      starting_quantity: z.unknown().optional(),
      ending_quantity: z.unknown().optional(),
      unit_price: z.unknown().optional(),
    },
    { error: 'must be an object.' },
  )
  .transform((b) => ({
    startingQuantity: b.starting_quantity,
    endingQuantity: b.ending_quantity,
    unitPrice: b.unit_price,
  }));

/**
 * The fields of a component body (`{"quantity_based_component":{...}}` and its kin, as
 * real clients send it), read into a {@link ComponentUpdateInput}: `name`, `handle`,
 * `unit_name`, `description`, `taxable`, and pricing as `unit_price` (a per_unit price) and/or
 * `pricing_scheme` with `prices[]` brackets `{starting_quantity, ending_quantity, unit_price}`.
 * Unit prices are decimal strings in major units; numbers are accepted and read as written.
 */
export const componentFields = z
  .object(
    {
      name: wireText.nullish(),
      handle: wireText.nullish(),
      unit_name: wireText.nullish(),
      description: wireText.nullish(),
      taxable: wireBoolean.nullish(),
      pricing_scheme: wireText.nullish(),
      unit_price: wireDecimal.nullish(),
      prices: z.array(priceBracket, { error: 'must be a list of price brackets.' }).nullish(),
    },
    { error: 'must be an object.' },
  )
  .transform((c): ComponentUpdateInput => {
    const input: { -readonly [K in keyof ComponentUpdateInput]: ComponentUpdateInput[K] } = {};
    if (c.name != null) input.name = c.name;
    if (c.unit_name != null) input.unitName = c.unit_name;
    if (c.taxable != null) input.taxable = c.taxable;
    // The engine checks the scheme against its closed list and answers 422 for any other value.
    if (c.pricing_scheme != null) input.pricingScheme = c.pricing_scheme as PricingScheme;
    if (c.unit_price != null) input.unitPrice = c.unit_price;
    if (c.prices != null) input.prices = c.prices;
    // Clearable fields: null removes a handle or a description.
    if (c.handle !== undefined) input.handle = c.handle;
    if (c.description !== undefined) input.description = c.description;
    return input;
  });

/** The component kinds as the service's create paths name them (`POST /product_families/{id}/<path>.json`). */
export const COMPONENT_KIND_PATHS: Readonly<Record<string, ComponentKind>> = {
  quantity_based_components: 'quantity_based_component',
  on_off_components: 'on_off_component',
  metered_components: 'metered_component',
};

/**
 * The create request of one component kind: the body is wrapped in the kind's own key
 * (`{"metered_component":{...}}`) and read into a {@link ComponentInput} of that kind.
 */
export function componentCreateRequest(kind: ComponentKind): WireRequest<ComponentInput> {
  return defineWireRequest(
    kind,
    componentFields.transform((fields): ComponentInput => ({ ...fields, kind })),
  );
}

/** `PUT /product_families/{fid}/components/{id}.json`: body `{"component":{...}}`; pricing changes make a new version. */
export const componentUpdateRequest = defineWireRequest('component', componentFields);
