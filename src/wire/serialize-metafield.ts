import type { MetadataRecord, MetafieldRecord } from '../ports/storage.js';
import type { ListPage } from './list-query.js';

/** A metafield's scope as the service writes it: page ids, and every flag as the string `"1"` or `"0"`. */
export interface MetafieldScopeJson {
  readonly hosted: readonly string[];
  readonly csv: '0' | '1';
  readonly invoices: '0' | '1';
  readonly statements: '0' | '1';
  readonly portal: '0' | '1';
}

/**
 * A metafield as the service writes it (an item of the bare array that creates and updates answer):
 * `input_type`, `enum` (null for text fields) and `scope` with string flags,
 * which the SDK checks against its `"0"`/`"1"` enum.
 */
export interface MetafieldJson {
  readonly id: number;
  readonly name: string;
  readonly input_type: MetafieldRecord['inputType'];
  readonly enum: readonly string[] | null;
  readonly scope: MetafieldScopeJson;
}

/** A metadata value as the service writes it: the value is always a string. */
export interface MetadataJson {
  readonly id: number;
  readonly name: string;
  readonly value: string;
  readonly resource_id: number;
  readonly metafield_id: number;
  /** Always null: a deleted value is gone, never kept as a tombstone. */
  readonly deleted_at: null;
}

const flag = (on: boolean): '0' | '1' => (on ? '1' : '0');

/** The fields of a metafield, unwrapped (the service does not wrap them). */
export function metafieldJson(field: MetafieldRecord): MetafieldJson {
  return {
    id: field.id,
    name: field.name,
    input_type: field.inputType,
    enum: field.enumValues === null ? null : [...field.enumValues],
    scope: {
      hosted: [...field.scope.hosted],
      csv: flag(field.scope.csv),
      invoices: flag(field.scope.invoices),
      statements: flag(field.scope.statements),
      portal: flag(field.scope.portal),
    },
  };
}

/** The fields of a metadata value, unwrapped (the service does not wrap them). */
export function metadataJson(value: MetadataRecord): MetadataJson {
  return {
    id: value.id,
    name: value.name,
    value: value.value,
    resource_id: value.resourceId,
    metafield_id: value.metafieldId,
    deleted_at: null,
  };
}

/** The paging fields of the service's paginated list bodies (metafields and metadata lists). */
export interface PaginationJson {
  readonly total_count: number;
  readonly current_page: number;
  readonly total_pages: number;
  readonly per_page: number;
}

/** One page of `items` with the counts of the whole list, as the service's paginated bodies give them. */
function paginate<T>(items: readonly T[], page: ListPage): PaginationJson & { readonly items: T[] } {
  const start = (page.page - 1) * page.perPage;
  return {
    total_count: items.length,
    current_page: page.page,
    total_pages: Math.ceil(items.length / page.perPage),
    per_page: page.perPage,
    items: items.slice(start, start + page.perPage),
  };
}

/**
 * `GET /{resource}/metafields.json`: unlike most lists, the service answers an object with paging
 * counts and the page under `metafields` (the SDK's `ListMetafieldsResponse`), not a bare array.
 */
export function serializeMetafieldList(
  fields: readonly MetafieldRecord[],
  page: ListPage,
): PaginationJson & { metafields: MetafieldJson[] } {
  const { items, ...counts } = paginate(fields, page);
  return { ...counts, metafields: items.map(metafieldJson) };
}

/**
 * `GET /{resource}/{id}/metadata.json`: an object with paging counts and the page under `metadata`
 * (the SDK's `PaginatedMetadata`), not a bare array.
 */
export function serializeMetadataList(
  values: readonly MetadataRecord[],
  page: ListPage,
): PaginationJson & { metadata: MetadataJson[] } {
  const { items, ...counts } = paginate(values, page);
  return { ...counts, metadata: items.map(metadataJson) };
}
