/**
 * The fake Stripe cannot drift from the real API (issue 21): the gateway contract runs once more on
 * the Stripe gateway over the fake, and every answer the fake sends in it (objects, search
 * results, errors, replays) is validated against Stripe's published OpenAPI schema of that answer
 * (`test/support/fake-stripe/schemas.json`, cut from Stripe's spec3.json by `extract-schemas.mjs`,
 * which names its source and API version). The fake's own drift check compares fields with
 * Stripe's fixtures; this checks types, enums, nullability and required fields as well.
 */

import Ajv, { type ValidateFunction } from 'ajv';
import { runGatewayContract } from 'billing-engine/testing';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stripeContractSubject } from '../support/fake-stripe/contract-subject.js';
import type { LoggedResponse } from '../support/fake-stripe/fake-stripe.js';
import stripeSchemas from '../support/fake-stripe/schemas.json' with { type: 'json' };

const _INTENTS = /^POST \/v1\/payment_intents$/;

/**
 * OpenAPI 3.0's `nullable: true` as JSON Schema: the schema, or null. (Ajv's own `nullable` needs
 * a `type` beside it and does not add null to an `enum`, and Stripe's schemas have both cases.)
 */
function toJsonSchema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toJsonSchema);
  if (value === null || typeof value !== 'object') return value;
  const { nullable, ...rest } = value as Record<string, unknown>;
  const converted = Object.fromEntries(
    Object.entries(rest).map(([key, v]) => [key, key === 'properties' ? mapValues(v, toJsonSchema) : toJsonSchema(v)]),
  );
  return nullable === true ? { anyOf: [converted, { type: 'null' }] } : converted;
}

function mapValues(value: unknown, f: (v: unknown) => unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, v]) => [key, f(v)]));
}

// Stripe's `x-` keywords and formats such as `unix-time` are annotations, not checks.
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
const components = { schemas: mapValues(stripeSchemas.components.schemas, toJsonSchema) };
ajv.addSchema({ $id: 'stripe', components });
const schemaOf = (name: string) => ajv.getSchema(`stripe#/components/schemas/${name}`) as ValidateFunction;
// The search result's items refer to the PaymentIntent in the same document.
ajv.addSchema({
  ...(toJsonSchema(stripeSchemas.searchResult) as Record<string, unknown>),
  $id: 'stripe-search',
  components,
});
const searchResult = ajv.getSchema('stripe-search') as ValidateFunction;
const validators = {
  payment_intent: schemaOf('payment_intent'),
  refund: schemaOf('refund'),
  customer: schemaOf('customer'),
  payment_method: schemaOf('payment_method'),
  error: schemaOf('error'),
};

/** The schema an answer must meet, from its route and status. */
function validatorFor(response: LoggedResponse): { name: string; validate: ValidateFunction } {
  if (response.status !== 200) return { name: 'error', validate: validators.error };
  if (response.route === 'GET /v1/payment_intents/search') return { name: 'search_result', validate: searchResult };
  if (/^(POST|GET) \/v1\/payment_intents(\/[^/]+)?$/.test(response.route))
    return { name: 'payment_intent', validate: validators.payment_intent };
  if (response.route === 'POST /v1/refunds') return { name: 'refund', validate: validators.refund };
  if (response.route === 'POST /v1/customers') return { name: 'customer', validate: validators.customer };
  if (/^(POST|GET) \/v1\/payment_methods(\/[^/]+(\/attach)?)?$/.test(response.route))
    return { name: 'payment_method', validate: validators.payment_method };
  throw new Error(`no schema for an answer to ${response.route}`);
}

/** Every answer checked, by schema name, and the mismatches found. */
const checked = new Map<string, number>();
const mismatches: string[] = [];
/** A PaymentIntent the fake sent that met the schema. */
let sampleIntent: Record<string, unknown> | undefined;

function validate(responses: readonly LoggedResponse[]): void {
  for (const response of responses) {
    const { name, validate } = validatorFor(response);
    const body = JSON.parse(response.body) as unknown;
    // Stripe's `error` schema is the whole answer, `{ error: <api_errors> }`.
    const value = body;
    checked.set(name, (checked.get(name) ?? 0) + 1);
    if (validate(value)) {
      if (name === 'payment_intent') sampleIntent ??= value as Record<string, unknown>;
    } else {
      mismatches.push(
        `${response.route} ${response.status} (${name}): ${ajv.errorsText(validate.errors, { separator: '; ' })}`,
      );
    }
  }
}

runGatewayContract(
  { describe, it, beforeEach, afterEach },
  {
    name: 'Stripe gateway over the local fake, every answer validated against Stripe’s OpenAPI schema',
    idempotentRefunds: true,
    create: () => stripeContractSubject((fake) => validate(fake.responses)),
  },
);

describe('the fake Stripe’s answers against Stripe’s OpenAPI schema', () => {
  afterAll(() => {
    console.info(
      `[fake stripe schema] ${[...checked].map(([name, n]) => `${n} ${name}`).join(', ')} answers checked against ${stripeSchemas.source}`,
    );
  });

  it('every answer the fake sent in the gateway contract meets the schema, and every kind of answer was sent', () => {
    expect(mismatches).toEqual([]);
    for (const name of ['payment_intent', 'search_result', 'refund', 'customer', 'payment_method', 'error']) {
      expect(checked.get(name) ?? 0, `${name} answers checked`).toBeGreaterThan(0);
    }
  });

  it('the schema rejects what Stripe would never send', () => {
    // The validators are not vacuous: a PaymentIntent the fake sent passes, and the same one with
    // an unknown status, a string amount, or no id fails; an error needs its type.
    expect(sampleIntent).toBeDefined();
    const intent = sampleIntent!;
    expect(validators.payment_intent(intent)).toBe(true);
    expect(validators.payment_intent({ ...intent, status: 'paid' })).toBe(false);
    expect(validators.payment_intent({ ...intent, amount: String(intent.amount) })).toBe(false);
    const { id: _id, ...withoutId } = intent;
    expect(validators.payment_intent(withoutId)).toBe(false);
    expect(validators.error({ error: { message: 'no type' } })).toBe(false);
    expect(validators.error({ error: { type: 'card_error', message: 'Your card was declined.' } })).toBe(true);
    expect(validators.error({ error: { type: 'card_trouble', message: 'Your card was declined.' } })).toBe(false);
  });
});
