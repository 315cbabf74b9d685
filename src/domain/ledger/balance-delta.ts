import type { TransactionType } from '../../ports/billing-records.js';

/**
 * How a ledger line moves the balance (positive = the customer owes more), from its type and its
 * amount as the service shows it: charges add, payments subtract, credits are
 * already negative, adjustments are signed, refunds and info lines leave the balance alone.
 */
export function balanceDelta(type: TransactionType, amountInCents: number): number {
  switch (type) {
    case 'charge':
    case 'adjustment':
    case 'credit':
      return amountInCents;
    case 'payment':
      return -amountInCents;
    case 'refund':
    case 'info':
      return 0;
  }
}
