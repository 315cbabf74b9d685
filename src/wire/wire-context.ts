import { formatInstant } from '../domain/time/index.js';
import type { SubscriptionState } from '../ports/storage.js';

/**
 * Which spelling the serializers use where the spec and the hosted service differ:
 * `spec` writes the spec's canonical spellings (`cancelled`); `chargify` writes the hosted
 * service's (`canceled`) so that existing clients with strict enums keep working.
 */
export type WireCompat = 'spec' | 'chargify';

/**
 * What every serializer needs to know about the site it answers for: timestamps are written in
 * the site's zone and money decimals in the site's currency, and `compat` picks enum spellings.
 */
export interface WireContext {
  /** IANA zone of the site; timestamps carry its offset. */
  readonly timeZone: string;
  /** ISO 4217 code of the site; decides the digits of decimal money strings. */
  readonly currency: string;
  /** Output spellings; default `spec`. */
  readonly compat?: WireCompat;
}

/**
 * An instant as the service writes it (`2026-01-15T07:00:00-05:00`, the site zone's offset), or
 * null. Clients validate timestamps as strings, so an epoch number is never written.
 */
export function wireTimestamp(instant: Date | null | undefined, context: WireContext): string | null {
  return instant ? formatInstant(instant, context.timeZone) : null;
}

/**
 * A subscription state in the requested spelling: the engine's canonical `cancelled` becomes
 * `canceled` under `chargify` compat, because the hosted service's clients reject any other value.
 */
export function wireState(state: SubscriptionState, compat: WireCompat = 'spec'): string {
  return compat === 'chargify' && state === 'cancelled' ? 'canceled' : state;
}
