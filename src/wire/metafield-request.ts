import { z } from 'zod';
import type { MetafieldRecord } from '../ports/storage.js';
import type {
  MetadataInput,
  MetafieldInput,
  MetafieldScopeInput,
  ScopeFlagInput,
} from '../services/metafield-service.js';
import { isGiven } from './subscription-request.js';
import { defineWireRequest } from './wire-request.js';
import { wireBoolean, wireText } from './wire-scalars.js';

// Scope flags come as "1"/"0", 1/0 or booleans; all mean the same on/off.
const scopeFlag = wireBoolean.transform((on): ScopeFlagInput => on);

const scopeFields = z
  .object(
    {
      hosted: z.array(wireText, { error: 'must be a list of hosted page ids or "all".' }).nullish(),
      csv: scopeFlag.nullish(),
      invoices: scopeFlag.nullish(),
      statements: scopeFlag.nullish(),
      portal: scopeFlag.nullish(),
    },
    { error: 'must be an object.' },
  )
  .transform((s): MetafieldScopeInput => {
    const scope: { -readonly [K in keyof MetafieldScopeInput]: MetafieldScopeInput[K] } = {};
    if (s.hosted != null) scope.hosted = s.hosted;
    if (s.csv != null) scope.csv = s.csv;
    if (s.invoices != null) scope.invoices = s.invoices;
    if (s.statements != null) scope.statements = s.statements;
    if (s.portal != null) scope.portal = s.portal;
    return scope;
  });

const metafieldShape = {
  name: wireText.nullish(),
  input_type: wireText.nullish(),
  enum: z.array(wireText, { error: 'must be a list of allowed values.' }).nullish(),
  scope: scopeFields.nullish(),
};

function toMetafieldInput(m: {
  name?: string | null;
  input_type?: string | null;
  enum?: string[] | null;
  scope?: MetafieldScopeInput | null;
}): MetafieldInput {
  return {
    ...(m.name == null ? {} : { name: m.name }),
    // The engine checks the type against its closed list and answers 422 for any other value.
    ...(m.input_type == null ? {} : { inputType: m.input_type as MetafieldRecord['inputType'] }),
    // null clears the allowed values (a field turned back into text).
    ...(m.enum === undefined ? {} : { enum: m.enum }),
    ...(m.scope == null ? {} : { scope: m.scope }),
  };
}

/**
 * The fields of one metafield: `name`, `input_type`
 * (`text`, `dropdown`, `radio`), `enum` (allowed values) and `scope` (`hosted` pages, and the
 * `csv`, `invoices`, `statements`, `portal` flags as `"1"`/`"0"`), read into a {@link MetafieldInput}.
 */
export const metafieldFields = z.object(metafieldShape, { error: 'must be an object.' }).transform(toMetafieldInput);

/** `POST /{customers|subscriptions}/metafields.json`: body `{"metafields":{...}}` or `{"metafields":[{...}]}`. */
export const metafieldsRequest = defineWireRequest('metafields', metafieldFields);

/** One metafield change: the field's current name and what changes. */
export interface MetafieldUpdate {
  /** The name the field has now; the new `name`, when renaming, is in `input`. */
  readonly currentName: string;
  readonly input: MetafieldInput;
}

/**
 * The fields of a metafield change (`PUT /{resource}/metafields.json`): `current_name` finds the
 * field, and `name` renames it. Without `current_name` the field is found by `name` and keeps it.
 */
export const metafieldUpdateFields = z
  .object({ ...metafieldShape, current_name: wireText.nullish() }, { error: 'must be an object.' })
  .superRefine((m, ctx) => {
    if (!isGiven(m.current_name) && !isGiven(m.name)) {
      ctx.addIssue({ code: 'custom', path: ['current_name'], message: 'cannot be blank.' });
    }
  })
  .transform((m): MetafieldUpdate => {
    const currentName = isGiven(m.current_name) ? (m.current_name as string) : (m.name as string);
    return { currentName, input: toMetafieldInput(m) };
  });

/** `PUT /{customers|subscriptions}/metafields.json`: body `{"metafields":{current_name, name?, ...}}` or a list of them. */
export const metafieldUpdateRequest = defineWireRequest('metafields', metafieldUpdateFields);

/**
 * The fields of one metadata value: `name` of an existing
 * field and its `value`. Values are strings; numbers and booleans are passed on for the engine to
 * write as their strings, as the service does.
 */
export const metadataFields = z
  .object(
    {
      name: wireText.nullish(),
      value: z
        .unknown()
        .optional()
        .superRefine((v, ctx) => {
          if (v !== undefined && v !== null && typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
            ctx.addIssue({ code: 'custom', message: 'must be a string.' });
        }),
    },
    { error: 'must be an object.' },
  )
  .transform(
    // Blank names and missing values are the engine's to report, with its messages.
    (m): MetadataInput => ({ name: m.name ?? '', value: (m.value ?? '') as MetadataInput['value'] }),
  );

/** `POST` and `PUT /{customers|subscriptions}/{id}/metadata.json`: body `{"metadata":{name, value}}` or a list of them. */
export const metadataRequest = defineWireRequest('metadata', metadataFields);

/**
 * The names of a metadata delete (`DELETE /{resource}/{id}/metadata.json?name=x` or
 * `?names[]=x&names[]=y`), from a parsed query; blank names are dropped, repeats kept once.
 */
export const metadataNamesQuery = z.record(z.string(), z.unknown()).transform((q): string[] => {
  const names = [q.name, ...(Array.isArray(q.names) ? q.names : [q.names])]
    .filter((n): n is string => typeof n === 'string' && n.trim() !== '')
    .map((n) => n.trim());
  return [...new Set(names)];
});
