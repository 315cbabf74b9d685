import { BillingError } from '../../errors.js';
import type { SubscriptionState } from '../../ports/billing-records.js';

/**
 * The subscription state machine. Every state change goes through
 * {@link transition}, which returns the next state or throws `invalid_transition` with the
 * service's message, so services never write a state the table does not allow.
 */

/** What happens to a subscription. */
export type LifecycleEvent =
  | 'cancel'
  | 'delayed_cancel'
  | 'reactivate'
  | 'reactivate_with_trial'
  | 'hold'
  | 'resume'
  | 'renewal_paid'
  | 'renewal_declined'
  | 'renewal_error'
  | 'dunning_exhausted_cancel'
  | 'dunning_exhausted_unpaid'
  | 'balance_settled'
  | 'trial_ended_without_payment'
  | 'expire';

/** States in which a subscription is alive: it renews and can be changed. */
export const LIVE_STATES: readonly SubscriptionState[] = ['trialing', 'active', 'soft_failure', 'past_due', 'unpaid'];

/** States that end billing. */
export const ENDED_STATES: readonly SubscriptionState[] = ['cancelled', 'expired', 'trial_ended', 'failed_to_create'];

const TABLE: Readonly<Record<LifecycleEvent, Partial<Record<SubscriptionState, SubscriptionState>>>> = {
  cancel: {
    trialing: 'cancelled',
    active: 'cancelled',
    soft_failure: 'cancelled',
    past_due: 'cancelled',
    unpaid: 'cancelled',
    on_hold: 'cancelled',
    trial_ended: 'cancelled',
    awaiting_signup: 'cancelled',
  },
  delayed_cancel: {
    trialing: 'cancelled',
    active: 'cancelled',
    soft_failure: 'cancelled',
    past_due: 'cancelled',
    unpaid: 'cancelled',
  },
  reactivate: { cancelled: 'active', trial_ended: 'active', unpaid: 'active' },
  reactivate_with_trial: { cancelled: 'trialing', trial_ended: 'trialing', unpaid: 'trialing' },
  hold: { trialing: 'on_hold', active: 'on_hold', soft_failure: 'on_hold', past_due: 'on_hold', unpaid: 'on_hold' },
  resume: { on_hold: 'active' },
  renewal_paid: { trialing: 'active', active: 'active', soft_failure: 'active', past_due: 'active', unpaid: 'active' },
  renewal_declined: {
    trialing: 'past_due',
    active: 'past_due',
    soft_failure: 'past_due',
    past_due: 'past_due',
    unpaid: 'unpaid',
  },
  renewal_error: {
    trialing: 'soft_failure',
    active: 'soft_failure',
    soft_failure: 'soft_failure',
    past_due: 'past_due',
    unpaid: 'unpaid',
  },
  dunning_exhausted_cancel: { past_due: 'cancelled', soft_failure: 'cancelled' },
  dunning_exhausted_unpaid: { past_due: 'unpaid', soft_failure: 'unpaid' },
  balance_settled: { past_due: 'active', soft_failure: 'active', unpaid: 'active' },
  trial_ended_without_payment: { trialing: 'trial_ended' },
  expire: { trialing: 'expired', active: 'expired', soft_failure: 'expired', past_due: 'expired', unpaid: 'expired' },
};

/** The service's message for a refused event in a state. */
function refusal(event: LifecycleEvent, from: SubscriptionState): string {
  switch (event) {
    case 'cancel':
    case 'delayed_cancel':
      return from === 'cancelled'
        ? 'The subscription is already canceled'
        : `Cannot cancel a subscription that is ${from}.`;
    case 'reactivate':
    case 'reactivate_with_trial':
      return 'Cannot reactivate a subscription that is not marked "Canceled", "Unpaid", or "Trial Ended".';
    case 'hold':
      return 'This subscription is not eligible to be put on hold.';
    case 'resume':
      return 'Only subscriptions that are on hold can be resumed.';
    default:
      return `A subscription that is ${from} cannot take the event ${event}.`;
  }
}

/** The state after `event`, or undefined when the table has no such move. */
export function nextState(from: SubscriptionState, event: LifecycleEvent): SubscriptionState | undefined {
  return TABLE[event][from];
}

/** The state after `event`; throws `invalid_transition` with the service's message when not allowed. */
export function transition(from: SubscriptionState, event: LifecycleEvent): SubscriptionState {
  const to = nextState(from, event);
  if (to === undefined) {
    const message = refusal(event, from);
    throw new BillingError('invalid_transition', message, {
      shape: (event === 'cancel' || event === 'delayed_cancel') && from === 'cancelled' ? 'single' : 'list',
      data: { from, event },
    });
  }
  return to;
}

/**
 * The state a canceled subscription returns to when it is resumed within its canceled period
 * (it returns to its previous state, billing dates unchanged): the state before the cancellation
 * when that was live, otherwise `active` (a subscription canceled while on hold comes back active).
 */
export function resumeCanceled(from: SubscriptionState, previous: SubscriptionState | undefined): SubscriptionState {
  transition(from, 'reactivate');
  return previous !== undefined && LIVE_STATES.includes(previous) ? previous : 'active';
}

/** True when the machine allows moving from `from` to `to` through some event (resumes included). */
export function isAllowedMove(from: SubscriptionState, to: SubscriptionState): boolean {
  if (from === 'cancelled' && LIVE_STATES.includes(to)) return true;
  return (Object.keys(TABLE) as LifecycleEvent[]).some((event) => TABLE[event][from] === to);
}

/** Every state any event can reach from `from` (for property tests and docs). */
export function reachableFrom(from: SubscriptionState): SubscriptionState[] {
  const out = new Set<SubscriptionState>();
  for (const event of Object.keys(TABLE) as LifecycleEvent[]) {
    const to = TABLE[event][from];
    if (to !== undefined) out.add(to);
  }
  return [...out];
}

/** Every lifecycle event. */
export const LIFECYCLE_EVENTS = Object.keys(TABLE) as readonly LifecycleEvent[];
