/** Small readers of command inputs shared by the ledger and account commands. */
import type { ValidationCollector } from '../errors.js';

/** An optional memo, trimmed; '' when absent. */
export function optionalMemo(memo: unknown, errors: ValidationCollector): string {
  if (memo === undefined || memo === null) return '';
  if (typeof memo !== 'string') {
    errors.add('Memo: must be text.', 'memo');
    return '';
  }
  return memo.trim();
}

/** A whole number of at least 1 given as a number or digits (paging); `fallback` when absent or wrong, with an error added. */
export function positiveInteger(
  value: number | string | undefined,
  fallback: number,
  label: string,
  errors: ValidationCollector,
): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value.trim()) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
    errors.add(`${label}: must be a positive integer.`);
    return fallback;
  }
  return n;
}
