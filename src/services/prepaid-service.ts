/**
 * Prepaid collection: the configuration endpoint and auto-replenishment. A prepaid subscription's
 * charges (renewals, allocations, one-time charges) are paid from its prepayment balance by the
 * ledger's credit, as every credit pays charges; the rule that the engine never charges its card
 * for them is in `posting.ts` ({@link collectsAutomatically}). The card is charged only to fund the
 * balance: at signup (`subscription-service.ts`) and here, when a draw leaves the balance below the
 * threshold. See docs/decisions.md, "Prepaid collection".
 */
import { BillingError, invalid, ValidationCollector } from '../errors.js';
import { type ChargeVault, collect, isOpenAttempt, type PendingCharge } from '../payments/collect.js';
import type { ChargeResult } from '../ports/gateway.js';
import type { DueWorkRecord, SubscriptionRecord, SubscriptionState } from '../ports/storage.js';
import { prepaymentTotal, replayAccounts } from './account-replay.js';
import { type CommandContext, runCommand } from './command-runner.js';
import { settleIfPaid } from './lifecycle-service.js';
import { pendingAttempt } from './payment-runner.js';
import { PREPAID_REPLENISHMENT, post, scheduleReplenishmentCheck } from './posting.js';
import {
  insertCardPrepayment,
  PREPAID_CONFIGURATION,
  PREPAID_REPLENISHING,
  type PrepaidConfiguration,
  type PrepaidConfigurationInput,
  prepaidConfigurationData,
  prepaidConfigurationOf,
  readPrepaidConfiguration,
  replenishmentAmount,
} from './prepaid-configuration.js';
import { loadSite, loadSubscription } from './site-lookup.js';
import { line, recordPayment, type SubscriptionDeps } from './subscription-service.js';

const CLOSED_STATES: readonly SubscriptionState[] = ['cancelled', 'expired'];

/** What the due work's replenishment row carries. */
interface ReplenishmentPlan {
  readonly subscriptionId: number;
  /** The row's unique key, also the key of its charge's payment attempt. */
  readonly key: string;
}

/** The memo of a replenishment's payment line and prepayment. */
const REPLENISH_MEMO = 'Prepaid subscription auto-replenishment';

/** Prepaid configurations and the auto-replenishment of prepaid subscriptions' balances. */
export class PrepaidService {
  readonly #deps: SubscriptionDeps;

  constructor(deps: SubscriptionDeps) {
    this.#deps = deps;
  }

  /**
   * Creates or updates a subscription's prepaid configuration
   * (`POST /subscriptions/{id}/prepaid_configurations.json`). On a subscription not yet prepaid it
   * makes it prepaid: it needs a card (replenishments are charged to it), and from then on the
   * engine charges nothing but replenishments (a dunning cycle in progress ends, as on a switch to
   * remittance). Fields left out keep their values. `initial_funding_amount_in_cents` is charged
   * only at signup; here it is recorded as given. With `auto_replenish` on, a replenishment check
   * is scheduled at once, so a balance already below the new threshold is topped up.
   */
  updateConfiguration(
    subdomain: string,
    subscriptionId: number,
    input: PrepaidConfigurationInput,
  ): Promise<PrepaidConfiguration> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      const errors = new ValidationCollector();
      if (CLOSED_STATES.includes(subscription.state))
        errors.add('Subscription: a canceled or expired subscription cannot be configured as prepaid.');
      const existing = prepaidConfigurationOf(subscription);
      if (existing === undefined && subscription.paymentProfileId === null) {
        errors.add(
          'Payment profile: a prepaid subscription needs a card to fund its balance; add a card first.',
          'payment_profile',
        );
      }
      const config = readPrepaidConfiguration(
        input,
        subscription.id,
        errors,
        existing ?? {
          id: subscription.id,
          initialFundingAmountInCents: 0,
          replenishToAmountInCents: null,
          autoReplenish: false,
          replenishThresholdAmountInCents: null,
        },
      );
      errors.throwIfAny();
      const updated = await ctx.tx.subscriptions.updateAtVersion(site.id, subscription.id, subscription.version, {
        paymentCollectionMethod: 'automatic',
        data: { ...subscription.data, [PREPAID_CONFIGURATION]: prepaidConfigurationData(config!) },
        updatedAt: ctx.now,
      });
      if (!updated) {
        throw new BillingError('conflict', `Subscription ${subscription.id} changed meanwhile; nothing was changed.`);
      }
      // No longer collected from the card: a dunning cycle would have nothing to retry.
      if (existing === undefined) {
        await ctx.tx.dueWork.cancelFor(site.id, subscription.id, ['dunning_retry'], ctx.now);
      }
      if (config!.autoReplenish) {
        await scheduleReplenishmentCheck(ctx.tx, updated, `configuration:${updated.version}`, ctx.now);
      }
      return config!;
    });
  }

  /** The subscription's prepaid configuration; 404 for a subscription that is not prepaid. */
  configuration(subdomain: string, subscriptionId: number): Promise<PrepaidConfiguration> {
    return this.#deps.storage.transaction(
      async (tx) => {
        const site = await loadSite(tx, subdomain);
        const config = prepaidConfigurationOf(await loadSubscription(tx, site.id, subscriptionId));
        if (config === undefined) throw invalid('Subscription: is not a prepaid subscription.');
        return config;
      },
      { readOnly: true },
    );
  }

  /**
   * Runs a replenishment check (a `reconcile_payment` row whose payload {@link isPrepaidReplenishment}
   * recognises): when the prepaid subscription auto-replenishes and its prepayment balance is below
   * the threshold, the card is charged what brings it back to `replenish_to_amount_in_cents`
   * (see `replenishmentAmount`), through the one collection path: the attempt, under the row's
   * key, is committed before the gateway is called, with a mark on the subscription that keeps a
   * second check from charging beside it. A row that comes back (a crash, a lost answer: the
   * worker releases it for an hour on `unknown`) resumes its attempt by the same key, so the
   * money is taken at most once. Success posts a `payment` line of kind `prepayment` (it pays open
   * invoices first) and its prepayment entry; a decline or error records the attempt and a
   * `payment_failure`, and the balance stays as it is until the next draw or prepayment.
   */
  replenish(work: Pick<DueWorkRecord, 'siteId' | 'payload'>): Promise<'succeeded' | 'failed' | 'unknown' | 'settled'> {
    const plan = parseReplenishmentPlan(work.payload);
    if (plan === undefined) {
      throw new BillingError('internal', 'A reconcile_payment row carries no prepaid replenishment plan.', {
        data: { payload: work.payload },
      });
    }
    const siteId = work.siteId;
    return collect<ReplenishmentPlan, 'succeeded' | 'failed' | 'unknown' | 'settled'>(this.#deps.gateway, {
      begin: () =>
        runCommand(this.#deps, async (ctx) => {
          const stored = await ctx.tx.payments.findByKey(siteId, plan.key);
          if (stored !== undefined) {
            // A row that came back: resume the attempt under its key, or report it settled.
            if (!isOpenAttempt(stored.status)) return { done: 'settled' as const };
            const subscription = await ctx.tx.subscriptions.findById(siteId, plan.subscriptionId);
            return { charge: await this.#charge(ctx, subscription, stored), plan };
          }
          const subscription = await ctx.tx.subscriptions.findById(siteId, plan.subscriptionId);
          const config = prepaidConfigurationOf(subscription);
          if (subscription === undefined || config === undefined || CLOSED_STATES.includes(subscription.state))
            return { done: 'settled' as const };
          if (subscription.paymentProfileId === null) return { done: 'settled' as const };
          const inFlight = subscription.data[PREPAID_REPLENISHING];
          if (typeof inFlight === 'string') {
            const other = await ctx.tx.payments.findByKey(siteId, inFlight);
            // Another replenishment is under way: it brings the balance back; this check has nothing to do.
            if (other !== undefined && isOpenAttempt(other.status)) return { done: 'settled' as const };
          }
          const accounts = replayAccounts(
            await ctx.tx.ledger.listForSubscription(siteId, subscription.id),
            await ctx.tx.accounts.listForSubscription(siteId, subscription.id),
          );
          const prepayments = prepaymentTotal(accounts);
          const owed = await ctx.tx.ledger.balance(siteId, subscription.id);
          const amount = replenishmentAmount(config, prepayments, owed);
          if (amount <= 0) return { done: 'settled' as const };
          const site = await ctx.tx.sites.findById(siteId);
          const attempt = await ctx.tx.payments.insert(
            pendingAttempt({
              siteId,
              subscriptionId: subscription.id,
              customerId: subscription.customerId,
              idempotencyKey: plan.key,
              amountInCents: amount,
              currency: site?.currency ?? 'USD',
              purpose: 'prepaid_replenishment',
              now: ctx.now,
            }),
          );
          const marked = await ctx.tx.subscriptions.updateAtVersion(siteId, subscription.id, subscription.version, {
            data: { ...subscription.data, [PREPAID_REPLENISHING]: plan.key },
          });
          // A concurrent writer: the transaction is rolled back (no attempt) and the row retried.
          if (!marked) throw new BillingError('conflict', `Subscription ${subscription.id} changed meanwhile.`);
          return { charge: await this.#charge(ctx, marked, attempt), plan };
        }),
      settle: (_charge, settledPlan, result) => this.#settle(siteId, settledPlan, result),
    });
  }

  async #charge(
    ctx: CommandContext,
    subscription: SubscriptionRecord | undefined,
    attempt: PendingCharge['attempt'],
  ): Promise<PendingCharge> {
    let vault: ChargeVault | undefined;
    if (subscription?.paymentProfileId != null) {
      const profile = await ctx.tx.customers.findPaymentProfile(subscription.siteId, subscription.paymentProfileId);
      if (profile) vault = { vaultToken: profile.vaultToken, customerVaultToken: profile.customerVaultToken };
    }
    return { attempt, vault, description: REPLENISH_MEMO };
  }

  /** Step 3: commits the replenishment's outcome once; an unknown one leaves the attempt (and the row) for later. */
  #settle(
    siteId: number,
    plan: ReplenishmentPlan,
    result: ChargeResult,
  ): Promise<'succeeded' | 'failed' | 'unknown' | 'settled'> {
    return runCommand(this.#deps, async (ctx) => {
      const stored = await ctx.tx.payments.findByKey(siteId, plan.key);
      if (stored === undefined || !isOpenAttempt(stored.status)) return 'settled' as const;
      if (result.outcome === 'unknown') {
        await ctx.tx.payments.update(siteId, stored.id, {
          status: 'unknown',
          message: result.message,
          updatedAt: ctx.now,
        });
        return 'unknown' as const;
      }
      const subscription = await loadSubscription(ctx.tx, siteId, plan.subscriptionId);
      const cleared = await clearReplenishing(ctx, subscription, plan.key);
      if (result.outcome === 'success') {
        const [payment] = await post(ctx.tx, [
          line(cleared, 'payment', 'prepayment', stored.amountInCents, REPLENISH_MEMO, ctx.now, {
            success: true,
            gatewayTransactionId: result.transactionId,
          }),
        ]);
        await insertCardPrepayment(ctx.tx, cleared, payment!, REPLENISH_MEMO, 'Auto-replenishment', ctx.now);
        await ctx.tx.payments.update(siteId, stored.id, {
          status: 'succeeded',
          gatewayTransactionId: result.transactionId,
          transactionId: payment!.id,
          updatedAt: ctx.now,
        });
        await settleIfPaid(ctx, siteId, cleared.id);
        recordPayment(ctx, cleared, payment!, true);
        return 'succeeded' as const;
      }
      await ctx.tx.payments.update(siteId, stored.id, {
        status: result.outcome === 'declined' ? 'declined' : 'failed',
        message: result.message,
        updatedAt: ctx.now,
      });
      ctx.record({
        siteId,
        key: 'payment_failure',
        subjectType: 'subscription',
        subjectId: cleared.id,
        payload: {
          subscription: { id: cleared.id, state: cleared.state },
          payment_attempt: { id: stored.id, amount_in_cents: stored.amountInCents, memo: REPLENISH_MEMO },
          message: result.message,
        },
      });
      return 'failed' as const;
    });
  }
}

/** Removes the in-flight mark `key` from the subscription (version-checked, retried on a concurrent write). */
async function clearReplenishing(
  ctx: CommandContext,
  subscription: SubscriptionRecord,
  key: string,
): Promise<SubscriptionRecord> {
  let current = subscription;
  for (let n = 0; n < 5; n++) {
    if (current.data[PREPAID_REPLENISHING] !== key) return current;
    const { [PREPAID_REPLENISHING]: _mark, ...rest } = current.data;
    const written = await ctx.tx.subscriptions.updateAtVersion(current.siteId, current.id, current.version, {
      data: rest,
    });
    if (written) return written;
    const again = await ctx.tx.subscriptions.findById(current.siteId, current.id);
    if (!again) return current;
    current = again;
  }
  throw new BillingError(
    'conflict',
    `Subscription ${subscription.id} kept changing while a replenishment was settled.`,
  );
}

function parseReplenishmentPlan(payload: Readonly<Record<string, unknown>>): ReplenishmentPlan | undefined {
  if (payload.type !== PREPAID_REPLENISHMENT) return undefined;
  const { subscriptionId, key } = payload;
  if (typeof subscriptionId !== 'number' || typeof key !== 'string') return undefined;
  return { subscriptionId, key };
}

/** True when a `reconcile_payment` row is a prepaid replenishment check (for {@link PrepaidService.replenish}). */
export function isPrepaidReplenishment(payload: Readonly<Record<string, unknown>>): boolean {
  return parseReplenishmentPlan(payload) !== undefined;
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const PREPAID_METHODS = ['updateConfiguration', 'configuration'] as const;
