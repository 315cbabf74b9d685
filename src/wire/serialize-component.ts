import type { ComponentKind, PricingScheme } from '../ports/storage.js';
import type { ComponentView } from '../services/component-service.js';
import { type WireContext, wireTimestamp } from './wire-context.js';

/** One price bracket as the service writes it: quantities as integers, the price as a decimal string. */
export interface ComponentPriceJson {
  readonly component_id: number;
  readonly starting_quantity: number;
  readonly ending_quantity: number | null;
  readonly unit_price: string;
}

/**
 * A component as the service writes it (inside `{"component":{...}}`): the kind and
 * pricing scheme in the service's spellings, `unit_price` and each bracket's `unit_price` as decimal
 * strings (the SDK rejects numbers), and `version` the number of the current pricing version.
 * `unit_price` is set only for per_unit pricing, where one price says it all.
 */
export interface ComponentJson {
  readonly id: number;
  readonly name: string;
  readonly handle: string | null;
  readonly kind: ComponentKind;
  readonly unit_name: string;
  readonly description: string | null;
  readonly taxable: boolean;
  readonly pricing_scheme: PricingScheme;
  readonly unit_price: string | null;
  readonly prices: readonly ComponentPriceJson[];
  readonly product_family_id: number;
  readonly archived: boolean;
  readonly archived_at: string | null;
  readonly version: number;
  readonly created_at: string | null;
  readonly updated_at: string | null;
}

/**
 * A price as money is usually written: at least two decimals (`"5"` becomes `"5.00"`), more only
 * when the price has them (`"0.0125"`). Done on the string so that no digit passes through a float.
 */
export function wirePrice(price: string): string {
  const [whole = '0', fraction = ''] = price.split('.');
  return `${whole}.${fraction.padEnd(2, '0')}`;
}

/** The fields of a component with the pricing of `view.version`, unwrapped. */
export function componentJson(view: ComponentView, context: WireContext): ComponentJson {
  const { component, version } = view;
  const pricing = version.pricing;
  const first = pricing.brackets[0];
  return {
    id: component.id,
    name: component.name,
    handle: component.handle,
    kind: component.kind,
    unit_name: component.unitName,
    description: component.description,
    taxable: component.taxable,
    pricing_scheme: pricing.scheme,
    unit_price: pricing.scheme === 'per_unit' && first !== undefined ? wirePrice(first.unitPrice) : null,
    prices: pricing.brackets.map((bracket) => ({
      component_id: component.id,
      starting_quantity: bracket.startingQuantity,
      ending_quantity: bracket.endingQuantity,
      unit_price: wirePrice(bracket.unitPrice),
    })),
    product_family_id: component.familyId,
    archived: component.archivedAt !== null,
    archived_at: wireTimestamp(component.archivedAt, context),
    version: version.version,
    created_at: wireTimestamp(component.createdAt, context),
    updated_at: wireTimestamp(component.updatedAt, context),
  };
}

/** `{"component":{...}}`, the body of a component create, read, update or archive, and the item of a list. */
export function serializeComponent(view: ComponentView, context: WireContext): { component: ComponentJson } {
  return { component: componentJson(view, context) };
}
