import { validationError } from '../../errors.js';
import { EVENT_KEYS, type EventKey } from '../../events.js';

/** Event keys an endpoint may subscribe to: every key the engine records; `test` is sent on request only. */
export const SUBSCRIBABLE_EVENT_KEYS: readonly EventKey[] = EVENT_KEYS.filter((key) => key !== 'test');

/**
 * Checks an endpoint's event list (`webhook_subscriptions`): a non-empty list of known event keys.
 * Returns it without duplicates, in the given order. Every unknown key is reported, so a typo in
 * one does not hide the others.
 */
export function checkWebhookSubscriptions(value: unknown): EventKey[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw validationError([{ message: 'Webhook subscriptions: cannot be blank.', attribute: 'webhook_subscriptions' }]);
  }
  const known = new Set<string>(SUBSCRIBABLE_EVENT_KEYS);
  const unknown = value.filter((key) => typeof key !== 'string' || !known.has(key));
  if (unknown.length > 0) {
    throw validationError(
      unknown.map((key) => ({
        message: `Webhook subscriptions: '${String(key)}' is not a valid event.`,
        attribute: 'webhook_subscriptions',
      })),
    );
  }
  return [...new Set(value as EventKey[])];
}
