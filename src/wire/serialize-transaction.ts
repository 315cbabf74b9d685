import type { TransactionRecord, TransactionType } from '../ports/storage.js';
import { type WireContext, wireTimestamp } from './wire-context.js';

/**
 * A ledger line as the service writes it (inside `{"transaction":{...}}`):
 * `transaction_type` in snake case and `type` as the service's class name (`Charge`, `Payment`,
 * `InfoTransaction`), integer `*_in_cents` and string timestamps.
 */
export interface TransactionJson {
  readonly id: number;
  readonly transaction_type: TransactionType;
  readonly type: string;
  readonly kind: string | null;
  readonly amount_in_cents: number;
  readonly memo: string;
  readonly success: boolean | null;
  readonly starting_balance_in_cents: number;
  readonly ending_balance_in_cents: number;
  readonly created_at: string | null;
  readonly subscription_id: number;
  readonly customer_id: number;
  readonly payment_id: number | null;
  readonly product_id: number | null;
  readonly component_id: number | null;
  readonly gateway_transaction_id: string | null;
  readonly refunded_amount_in_cents: number;
}

const TYPE_NAMES: Readonly<Record<TransactionType, string>> = {
  charge: 'Charge',
  credit: 'Credit',
  adjustment: 'Adjustment',
  payment: 'Payment',
  refund: 'Refund',
  info: 'InfoTransaction',
};

/** The fields of a ledger line, unwrapped. */
export function transactionJson(line: TransactionRecord, context: WireContext): TransactionJson {
  return {
    id: line.id,
    transaction_type: line.type,
    type: TYPE_NAMES[line.type],
    kind: line.kind,
    amount_in_cents: line.amountInCents,
    memo: line.memo,
    success: line.success,
    starting_balance_in_cents: line.startingBalanceInCents,
    ending_balance_in_cents: line.endingBalanceInCents,
    created_at: wireTimestamp(line.createdAt, context),
    subscription_id: line.subscriptionId,
    customer_id: line.customerId,
    payment_id: line.paymentId,
    product_id: line.productId,
    component_id: line.componentId,
    gateway_transaction_id: line.gatewayTransactionId,
    refunded_amount_in_cents: line.refundedAmountInCents,
  };
}

/** `{"transaction":{...}}`, the item of a transaction list. */
export function serializeTransaction(line: TransactionRecord, context: WireContext): { transaction: TransactionJson } {
  return { transaction: transactionJson(line, context) };
}
