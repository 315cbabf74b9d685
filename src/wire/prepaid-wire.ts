import { z } from 'zod';
import type { PrepaidConfiguration, PrepaidConfigurationInput } from '../services/prepaid-configuration.js';
import { defineWireRequest } from './wire-request.js';
import { wireBoolean, wireDecimal } from './wire-scalars.js';

/**
 * The fields of a prepaid configuration (the signup's `prepaid_configuration`, the body of
 * `POST /subscriptions/{id}/prepaid_configurations.json`): amounts in cents, checked by the engine
 * (integers, their order, what `auto_replenish` needs).
 */
export const prepaidConfigurationFields = z
  .object(
    {
      initial_funding_amount_in_cents: wireDecimal.nullish(),
      replenish_to_amount_in_cents: wireDecimal.nullish(),
      auto_replenish: wireBoolean.nullish(),
      replenish_threshold_amount_in_cents: wireDecimal.nullish(),
    },
    { error: 'must be an object.' },
  )
  .transform(
    (c): PrepaidConfigurationInput => ({
      ...(c.initial_funding_amount_in_cents == null
        ? {}
        : { initialFundingAmountInCents: c.initial_funding_amount_in_cents }),
      ...(c.replenish_to_amount_in_cents == null ? {} : { replenishToAmountInCents: c.replenish_to_amount_in_cents }),
      ...(c.auto_replenish == null ? {} : { autoReplenish: c.auto_replenish }),
      ...(c.replenish_threshold_amount_in_cents == null
        ? {}
        : { replenishThresholdAmountInCents: c.replenish_threshold_amount_in_cents }),
    }),
  );

/** `POST /subscriptions/{id}/prepaid_configurations.json`: `{"prepaid_configuration":{...}}`. */
export const prepaidConfigurationRequest = defineWireRequest('prepaid_configuration', prepaidConfigurationFields);

/** A prepaid configuration as the service writes it (the SDK's `PrepaidConfiguration`). */
export interface PrepaidConfigurationJson {
  readonly id: number;
  readonly initial_funding_amount_in_cents: number;
  readonly replenish_to_amount_in_cents: number | null;
  readonly auto_replenish: boolean;
  readonly replenish_threshold_amount_in_cents: number | null;
}

/** The fields of a prepaid configuration, unwrapped. */
export function prepaidConfigurationJson(config: PrepaidConfiguration): PrepaidConfigurationJson {
  return {
    id: config.id,
    initial_funding_amount_in_cents: config.initialFundingAmountInCents,
    replenish_to_amount_in_cents: config.replenishToAmountInCents,
    auto_replenish: config.autoReplenish,
    replenish_threshold_amount_in_cents: config.replenishThresholdAmountInCents,
  };
}
