/**
 * A prepaid subscription's configuration and how it is read and checked. A subscription is prepaid
 * when its data carries a configuration ({@link PREPAID_CONFIGURATION}): its charges are paid from
 * its prepayment balance, never charged to the card; the card is charged only to fund that balance
 * (the signup's initial funding, auto-replenishment). See docs/decisions.md, "Prepaid collection".
 */
import { parseMinorAmount } from '../domain/money/index.js';
import type { ValidationCollector } from '../errors.js';
import type {
  AccountEntryRecord,
  StorageTransaction,
  SubscriptionRecord,
  TransactionRecord,
} from '../ports/storage.js';

/** The subscription data key of its prepaid configuration; present exactly when the subscription is prepaid. */
export const PREPAID_CONFIGURATION = 'prepaidConfiguration';

/** The subscription data key of the replenishment charge in flight (its attempt key), while it is open. */
export const PREPAID_REPLENISHING = 'prepaidReplenishing';

/** A prepaid subscription's configuration, in minor units. */
export interface PrepaidConfiguration {
  /** One configuration per subscription: its id is the subscription's. */
  readonly id: number;
  /** What the signup charged to the card and put on the prepayment balance. */
  readonly initialFundingAmountInCents: number;
  /** Where an auto-replenishment brings the prepayment balance back to. */
  readonly replenishToAmountInCents: number | null;
  readonly autoReplenish: boolean;
  /** A prepayment balance below this after a draw starts an auto-replenishment. */
  readonly replenishThresholdAmountInCents: number | null;
}

/** The fields of a configuration as given (signup or upsert); amounts as the client sent them. */
export interface PrepaidConfigurationInput {
  readonly initialFundingAmountInCents?: string | number | null;
  readonly replenishToAmountInCents?: string | number | null;
  readonly autoReplenish?: boolean | null;
  readonly replenishThresholdAmountInCents?: string | number | null;
}

/** The subscription's prepaid configuration, or undefined when it is not prepaid. */
export function prepaidConfigurationOf(
  subscription: { readonly id?: number; readonly data?: Readonly<Record<string, unknown>> } | undefined,
): PrepaidConfiguration | undefined {
  const held = subscription?.data?.[PREPAID_CONFIGURATION];
  if (held === null || typeof held !== 'object') return undefined;
  const c = held as Record<string, unknown>;
  const amount = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) ? v : null);
  return {
    id: subscription?.id ?? amount(c.id) ?? 0,
    initialFundingAmountInCents: amount(c.initialFundingAmountInCents) ?? 0,
    replenishToAmountInCents: amount(c.replenishToAmountInCents),
    autoReplenish: c.autoReplenish === true,
    replenishThresholdAmountInCents: amount(c.replenishThresholdAmountInCents),
  };
}

/** Whether the subscription is collected `prepaid` (its charges are paid from its prepayment balance). */
export function isPrepaid(subscription: { readonly data?: Readonly<Record<string, unknown>> }): boolean {
  return prepaidConfigurationOf(subscription) !== undefined;
}

/** The payment collection method a subscription shows: `prepaid` when it has a configuration. */
export function shownCollectionMethod(
  subscription: Pick<SubscriptionRecord, 'paymentCollectionMethod' | 'data'>,
): 'automatic' | 'remittance' | 'prepaid' {
  return isPrepaid(subscription) ? 'prepaid' : subscription.paymentCollectionMethod;
}

/**
 * Reads a configuration given at signup (`initial_funding_amount_in_cents` required and above 0)
 * or to the upsert endpoint (merged over `existing`: a field left out keeps its value). With
 * `auto_replenish` both `replenish_to_amount_in_cents` and `replenish_threshold_amount_in_cents`
 * are required, above 0, and the threshold below the amount replenished to. Problems go to
 * `errors` under `prepaid_configuration.<field>`; the result is undefined when there were any.
 */
export function readPrepaidConfiguration(
  input: PrepaidConfigurationInput | undefined,
  id: number,
  errors: ValidationCollector,
  existing?: PrepaidConfiguration,
): PrepaidConfiguration | undefined {
  const before = errors.ok;
  const local: string[] = [];
  const amount = (value: unknown, label: string, field: string, fallback: number | null): number | null => {
    if (value === undefined || value === null || value === '') return fallback;
    const parsed = errors.capture(() =>
      parseMinorAmount(value, { field: label, attribute: `prepaid_configuration.${field}` }),
    );
    return parsed ?? fallback;
  };
  const funding = amount(
    input?.initialFundingAmountInCents,
    'Initial funding amount in cents',
    'initial_funding_amount_in_cents',
    existing?.initialFundingAmountInCents ?? null,
  );
  const replenishTo = amount(
    input?.replenishToAmountInCents,
    'Replenish to amount in cents',
    'replenish_to_amount_in_cents',
    existing?.replenishToAmountInCents ?? null,
  );
  const threshold = amount(
    input?.replenishThresholdAmountInCents,
    'Replenish threshold amount in cents',
    'replenish_threshold_amount_in_cents',
    existing?.replenishThresholdAmountInCents ?? null,
  );
  const autoReplenish = input?.autoReplenish ?? existing?.autoReplenish ?? false;
  if (existing === undefined && (funding === null || funding <= 0)) {
    errors.add(
      'Initial funding amount in cents: must be greater than 0.',
      'prepaid_configuration.initial_funding_amount_in_cents',
    );
    local.push('funding');
  }
  if (autoReplenish) {
    if (replenishTo === null || replenishTo <= 0) {
      errors.add(
        'Replenish to amount in cents: must be greater than 0 when auto replenish is on.',
        'prepaid_configuration.replenish_to_amount_in_cents',
      );
      local.push('to');
    }
    if (threshold === null || threshold <= 0) {
      errors.add(
        'Replenish threshold amount in cents: must be greater than 0 when auto replenish is on.',
        'prepaid_configuration.replenish_threshold_amount_in_cents',
      );
      local.push('threshold');
    }
    if (replenishTo !== null && threshold !== null && threshold > 0 && replenishTo > 0 && threshold >= replenishTo) {
      errors.add(
        'Replenish threshold amount in cents: must be less than the replenish to amount.',
        'prepaid_configuration.replenish_threshold_amount_in_cents',
      );
      local.push('order');
    }
  }
  if (!before || !errors.ok || local.length > 0) return undefined;
  return {
    id,
    initialFundingAmountInCents: funding ?? 0,
    replenishToAmountInCents: replenishTo,
    autoReplenish,
    replenishThresholdAmountInCents: threshold,
  };
}

/** The configuration as the subscription's data stores it (plain JSON). */
export function prepaidConfigurationData(config: PrepaidConfiguration): Record<string, unknown> {
  return {
    id: config.id,
    initialFundingAmountInCents: config.initialFundingAmountInCents,
    replenishToAmountInCents: config.replenishToAmountInCents,
    autoReplenish: config.autoReplenish,
    replenishThresholdAmountInCents: config.replenishThresholdAmountInCents,
  };
}

/**
 * What an auto-replenishment charges: enough to bring the prepayment balance back to
 * `replenish_to_amount_in_cents` once what is owed is paid (a replenishment is a prepayment, and a
 * prepayment pays open invoices first). Zero when the balance is not below the threshold, or the
 * configuration does not auto-replenish.
 */
export function replenishmentAmount(
  config: PrepaidConfiguration,
  prepaymentBalanceInCents: number,
  owedInCents: number,
): number {
  if (!config.autoReplenish) return 0;
  const threshold = config.replenishThresholdAmountInCents ?? 0;
  const target = config.replenishToAmountInCents ?? 0;
  if (prepaymentBalanceInCents >= threshold && owedInCents <= 0) return 0;
  return Math.max(0, target - prepaymentBalanceInCents + Math.max(0, owedInCents));
}

/**
 * Records money charged to the card for a prepaid subscription's balance (initial funding, an
 * auto-replenishment) on its prepayment account, for the `payment` line (kind `prepayment`) that
 * the caller posted: the account entry that makes the line's money a prepayment.
 */
export function insertCardPrepayment(
  tx: StorageTransaction,
  subscription: Pick<SubscriptionRecord, 'id' | 'siteId'>,
  payment: Pick<TransactionRecord, 'id' | 'amountInCents'>,
  memo: string,
  details: string,
  now: Date,
): Promise<AccountEntryRecord> {
  return tx.accounts.insert({
    siteId: subscription.siteId,
    subscriptionId: subscription.id,
    account: 'prepayment',
    entryType: 'prepayment',
    amountInCents: payment.amountInCents,
    memo,
    details,
    method: 'credit_card',
    external: false,
    prepaymentId: null,
    transactionId: payment.id,
    createdAt: now,
  });
}

/** A subscription's data without its prepaid configuration (and replenishment mark): what leaving prepaid writes. */
export function withoutPrepaidConfiguration(data: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { [PREPAID_CONFIGURATION]: _config, [PREPAID_REPLENISHING]: _mark, ...rest } = data;
  return rest;
}
