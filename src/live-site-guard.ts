import { BillingError } from './errors.js';
import type { PaymentAttemptsRepository, Storage, StorageTransaction } from './ports/storage.js';

/** Why a live site's payment is refused by an engine built without a `gateway` option. */
export const LIVE_SITE_NEEDS_GATEWAY_MESSAGE =
  'This site is live and the engine has no payment gateway: pass the gateway option to createBillingEngine (the built-in test gateway serves test sites only).';

/**
 * The storage an engine without a `gateway` option runs its commands on: the same storage, except
 * that recording a payment attempt for a live site fails with `gateway_error`. Every payment
 * (signup, renewal, retry, one-time charge, migration, allocation) commits its pending attempt
 * before the gateway is called, so the refusal comes before any charge, and the command's
 * transaction rolls back. Test sites keep the built-in test gateway.
 */
export function refusingLiveSitePayments(storage: Storage): Storage {
  return {
    capabilities: storage.capabilities,
    transaction: (work, options) => storage.transaction((tx) => work(guardTransaction(tx)), options),
    migrate: () => storage.migrate(),
    close: () => storage.close(),
  };
}

function guardTransaction(tx: StorageTransaction): StorageTransaction {
  // Made on first use: most transactions never touch payments (the adapters build repositories lazily too).
  let payments: PaymentAttemptsRepository | undefined;
  return new Proxy(tx, {
    get(target, property, receiver) {
      if (property !== 'payments') return Reflect.get(target, property, receiver);
      payments ??= guardPayments(target);
      return payments;
    },
  });
}

function guardPayments(tx: StorageTransaction): PaymentAttemptsRepository {
  const inner = tx.payments;
  return new Proxy(inner, {
    get(target, property) {
      if (property === 'insert') {
        return async (attempt: Parameters<PaymentAttemptsRepository['insert']>[0]) => {
          const site = await tx.sites.findById(attempt.siteId);
          if (site?.mode === 'live')
            throw new BillingError('gateway_error', LIVE_SITE_NEEDS_GATEWAY_MESSAGE, { data: { option: 'gateway' } });
          return target.insert(attempt);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
