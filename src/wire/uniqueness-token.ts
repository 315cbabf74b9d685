import { z } from 'zod';
import { invalid } from '../errors.js';
import { isPlainObject, parseWireParams } from './wire-request.js';
import { wireText } from './wire-scalars.js';

// Numbers are accepted because some clients generate numeric tokens; the engine compares strings.
const tokenParams = z.object({ uniqueness_token: wireText.nullish() }, { error: 'must be an object.' });

/**
 * The top-level `uniqueness_token` of a POST or PUT body, beside the wrapper, as
 * the engine's `uniquenessToken`: `{}` when there is none (missing, null or blank), so that it can
 * be spread into a command's input. A token that is neither a string nor a number is a 422.
 */
export function uniquenessTokenOf(body: unknown): { readonly uniquenessToken?: string } {
  const params = parseWireParams(tokenParams, isPlainObject(body) ? body : {}, 'body');
  const token = params.uniqueness_token?.trim();
  return token === undefined || token === '' ? {} : { uniquenessToken: token };
}

/**
 * Refuses a `uniqueness_token` on an endpoint whose engine command cannot honour one (422). The
 * service accepts a token on every POST and PUT; accepting it here without checking it would let a
 * client believe that a retried request cannot run twice.
 */
export function refuseUniquenessToken(body: unknown): void {
  if (uniquenessTokenOf(body).uniquenessToken !== undefined) {
    throw invalid('Uniqueness token: is not supported on this endpoint by this server yet.', 'uniqueness_token');
  }
}
