import { invalid } from '../../errors.js';

// Intl data is fixed for the life of the process, so both lookups are computed once.
let supportedCurrencies: ReadonlySet<string> | undefined;
const minorDigitsCache = new Map<string, number>();

/**
 * Checks that `code` is an ISO 4217 currency known to this runtime's Intl data (case-insensitive)
 * and returns it upper-cased. Anything else, including well-formed but unknown codes such as
 * `XYZ`, throws "Currency: 'XYZ' is not a supported ISO 4217 currency." on attribute `currency`,
 * because `Intl.NumberFormat` would otherwise silently give an unknown code two minor digits.
 */
export function assertCurrency(code: unknown): string {
  supportedCurrencies ??= new Set(Intl.supportedValuesOf('currency'));
  const upper = typeof code === 'string' ? code.toUpperCase() : undefined;
  if (upper === undefined || !supportedCurrencies.has(upper)) {
    throw invalid(`Currency: '${String(code)}' is not a supported ISO 4217 currency.`, 'currency');
  }
  return upper;
}

/**
 * The number of digits of the currency's minor unit (USD 2, JPY 0, KWD 3), as `Intl.NumberFormat`
 * reports it, so the engine and any formatter the host uses agree on what a minor unit is. The code
 * is checked with {@link assertCurrency} first; results are cached per code.
 */
export function currencyMinorDigits(code: string): number {
  const currency = assertCurrency(code);
  let digits = minorDigitsCache.get(currency);
  if (digits === undefined) {
    // The option is typed optional because significant-digit formats omit it; currency formats always set it.
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    minorDigitsCache.set(currency, digits);
  }
  return digits;
}
