/**
 * Money: amounts are safe integers in the currency's minor unit, decimals go through a private
 * decimal.js clone, and every rounding happens at a named place with a named mode.
 */
export { allocate, allocateEvenly } from './allocate.js';
export { applyPercentage } from './apply-percentage.js';
export { decimalToMinor, minorToDecimal, toMajorString } from './conversion.js';
export { assertCurrency, currencyMinorDigits } from './currency.js';
export { assertMinor, sumMinor } from './minor.js';
export { type DecimalInput, MoneyDecimal, toMoneyDecimal } from './money-decimal.js';
export { type AmountParseOptions, parseMajorAmount, parseMinorAmount } from './parse-amount.js';
export { type PercentageParseOptions, parsePercentage } from './parse-percentage.js';
export { prorate } from './prorate.js';
export {
  DEFAULT_ROUNDING_MODE,
  decimalRounding,
  ROUNDING_MODES,
  type RoundingMode,
  roundQuotient,
  roundToMinor,
} from './rounding.js';
export { parseWireDecimal, type WireDecimalOptions } from './wire-decimal.js';
