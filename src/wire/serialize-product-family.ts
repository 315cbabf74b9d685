import type { ProductFamilyRecord } from '../ports/storage.js';
import { type WireContext, wireTimestamp } from './wire-context.js';

/** A product family as the service writes it (inside `{"product_family":{...}}`). */
export interface ProductFamilyJson {
  readonly id: number;
  readonly name: string;
  readonly handle: string;
  readonly description: string | null;
  readonly accounting_code: string | null;
  readonly created_at: string | null;
  readonly updated_at: string | null;
}

/** The fields of a product family, unwrapped (also nested in a product). */
export function productFamilyJson(family: ProductFamilyRecord, context: WireContext): ProductFamilyJson {
  return {
    id: family.id,
    name: family.name,
    handle: family.handle,
    description: family.description,
    // Families carry no accounting code in the engine; the key is kept because the service's clients read it.
    accounting_code: null,
    created_at: wireTimestamp(family.createdAt, context),
    updated_at: wireTimestamp(family.updatedAt, context),
  };
}

/** `{"product_family":{...}}`, the body of a family create or read and the item of a family list. */
export function serializeProductFamily(
  family: ProductFamilyRecord,
  context: WireContext,
): { product_family: ProductFamilyJson } {
  return { product_family: productFamilyJson(family, context) };
}
