import { z } from 'zod';
import type { FamilyInput, FamilyUpdateInput } from '../services/catalog-service.js';
import { defineWireRequest } from './wire-request.js';
import { wireText } from './wire-scalars.js';

/** The fields of `{"product_family":{...}}`, read into a {@link FamilyInput}. */
export const productFamilyFields = z
  .object(
    {
      name: wireText.nullish(),
      handle: wireText.nullish(),
      description: wireText.nullish(),
    },
    { error: 'must be an object.' },
  )
  .transform(
    (f): FamilyInput => ({
      // A missing name is left to the engine so that the message is its "Name: cannot be blank.".
      name: f.name ?? '',
      ...(f.handle == null ? {} : { handle: f.handle }),
      description: f.description ?? null,
    }),
  );

/** `POST /product_families.json`: body `{"product_family":{name, handle?, description?}}`. */
export const productFamilyRequest = defineWireRequest('product_family', productFamilyFields);

/**
 * The fields of `{"product_family":{...}}` on update (`PUT /product_families/{id}.json`), read into
 * a {@link FamilyUpdateInput}: only what is sent changes, and `null` clears the description.
 */
export const productFamilyUpdateFields = z
  .object(
    {
      name: wireText.nullish(),
      handle: wireText.nullish(),
      description: wireText.nullish(),
    },
    { error: 'must be an object.' },
  )
  .transform(
    (f): FamilyUpdateInput => ({
      ...(f.name == null ? {} : { name: f.name }),
      ...(f.handle == null ? {} : { handle: f.handle }),
      ...(f.description === undefined ? {} : { description: f.description }),
    }),
  );

/** `PUT /product_families/{id}.json`: body `{"product_family":{name?, handle?, description?}}`. */
export const productFamilyUpdateRequest = defineWireRequest('product_family', productFamilyUpdateFields);
