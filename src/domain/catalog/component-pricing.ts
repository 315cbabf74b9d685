/**
 * Component pricing: the four schemes, the bracket rules and the price of a
 * quantity. Unit prices are exact decimals in major units with at most four places; a price is
 * computed exactly in decimal and rounded to the currency's minor unit once, at the end.
 */
import type { Decimal } from 'decimal.js';
import { BillingError, invalid, ValidationCollector } from '../../errors.js';
import {
  DEFAULT_ROUNDING_MODE,
  decimalToMinor,
  MoneyDecimal,
  parseWireDecimal,
  type RoundingMode,
} from '../money/index.js';

// The three types below mirror `ports/catalog-extras.ts` structurally: the domain imports nothing
// outside `domain/`, and the compiler checks that stored records still fit wherever services pass them.

/** How a component's brackets turn a quantity into a price. */
export type PricingScheme = 'per_unit' | 'volume' | 'tiered' | 'stairstep';

/** One price bracket: `unitPrice` is per unit, or per bracket for stairstep; a decimal string in major units. */
export interface PriceBracket {
  readonly startingQuantity: number;
  /** Null for the one open-ended bracket, which must be the last. */
  readonly endingQuantity: number | null;
  readonly unitPrice: string;
}

/** A scheme and its brackets, sorted by starting quantity. */
export interface ComponentPricing {
  readonly scheme: PricingScheme;
  readonly brackets: readonly PriceBracket[];
}

/** Every pricing scheme, in the service's spelling. */
export const PRICING_SCHEMES: readonly PricingScheme[] = ['per_unit', 'volume', 'tiered', 'stairstep'];

/** The smallest unit price the service accepts ($0.0001). */
export const MIN_UNIT_PRICE = '0.0001';

/** How many decimal places a unit price may have. */
export const UNIT_PRICE_DECIMAL_PLACES = 4;

/** A bracket as a caller sends it; quantities and prices may arrive as numbers or strings. */
export interface PriceBracketInput {
  readonly startingQuantity?: unknown;
  readonly endingQuantity?: unknown;
  readonly unitPrice?: unknown;
}

/** A pricing as a caller sends it. */
export interface ComponentPricingInput {
  readonly scheme?: unknown;
  readonly brackets?: readonly PriceBracketInput[] | null;
}

/**
 * Reads and checks a pricing: the scheme, every bracket's quantities and unit price, and the
 * bracket rules of {@link validateBrackets}. Returns the pricing with brackets sorted by starting
 * quantity and unit prices in canonical form (`"2.50"` becomes `"2.5"`), or throws one validation
 * error carrying every problem found, each message once.
 */
export function parseComponentPricing(input: ComponentPricingInput): ComponentPricing {
  const problems = new UniqueMessages();
  const scheme = input.scheme;
  if (scheme === undefined || scheme === null || scheme === '')
    problems.add('Pricing scheme: cannot be blank.', 'pricing_scheme');
  else if (!PRICING_SCHEMES.includes(scheme as PricingScheme)) {
    problems.add(
      `Pricing scheme: '${String(scheme)}' is not one of per_unit, volume, tiered, stairstep.`,
      'pricing_scheme',
    );
  }
  const brackets: PriceBracket[] = [];
  for (const raw of input.brackets ?? []) {
    const bracket = parseBracket(raw, problems);
    if (bracket) brackets.push(bracket);
  }
  brackets.sort((a, b) => a.startingQuantity - b.startingQuantity);
  // The bracket rules need every bracket read and a known scheme; otherwise they would report noise.
  if (PRICING_SCHEMES.includes(scheme as PricingScheme) && brackets.length === (input.brackets ?? []).length) {
    problems.merge(validateBrackets({ scheme: scheme as PricingScheme, brackets }));
  }
  problems.throwIfAny();
  return { scheme: scheme as PricingScheme, brackets };
}

/**
 * The service's bracket rules, as service-style messages on a collector: at least one
 * bracket; per_unit has exactly one; no overlaps; no gaps; only the last bracket may be open-ended;
 * quantities are whole numbers from 1 and a bracket ends at or after its start; unit prices are
 * decimals of at most four places and at least {@link MIN_UNIT_PRICE}. The first bracket may
 * start above 1 (units below it are free). Brackets are checked in starting-quantity order.
 */
export function validateBrackets(pricing: ComponentPricing, errors = new ValidationCollector()): ValidationCollector {
  const problems = new UniqueMessages();
  const sorted = [...pricing.brackets].sort((a, b) => a.startingQuantity - b.startingQuantity);
  if (pricing.scheme === 'per_unit' && sorted.length !== 1) {
    problems.add('Prices: a per-unit component has exactly one price bracket.', 'prices');
  } else if (sorted.length === 0) {
    problems.add('Prices: at least one price bracket is required.', 'prices');
  }
  for (const bracket of sorted) {
    checkQuantities(bracket.startingQuantity, bracket.endingQuantity, problems);
    checkUnitPrice(bracket.unitPrice, problems);
  }
  sorted.forEach((bracket, index) => {
    if (bracket.endingQuantity === null && index < sorted.length - 1) {
      problems.add('Prices: only the last price bracket may be open-ended.', 'prices');
    }
    const next = sorted[index + 1];
    // An open-ended bracket before another is already reported above; comparing with it adds nothing.
    if (next === undefined || bracket.endingQuantity === null) return;
    if (next.startingQuantity <= bracket.endingQuantity) problems.add('Prices: must not overlap.', 'prices');
    else if (next.startingQuantity > bracket.endingQuantity + 1) problems.add('Prices: must not have gaps.', 'prices');
  });
  problems.copyTo(errors);
  return errors;
}

/**
 * The price of `quantity` units in minor units of `currency`:
 * - per_unit and tiered: every unit at the price of the bracket it falls in;
 * - volume: every unit at the price of the bracket that contains the whole quantity;
 * - stairstep: the flat price of the bracket that contains the quantity.
 * Units below the first bracket cost nothing (the first bracket may start above 1). A quantity
 * beyond a closed last bracket is refused. The sum is exact in decimal and rounded half-up (or with
 * `mode`) to the minor unit once. The pricing must have passed {@link validateBrackets}.
 */
export function componentPrice(
  pricing: ComponentPricing,
  quantity: number,
  currency: string,
  mode: RoundingMode = DEFAULT_ROUNDING_MODE,
): number {
  assertQuantity(quantity);
  const brackets = [...pricing.brackets].sort((a, b) => a.startingQuantity - b.startingQuantity);
  const last = brackets.at(-1);
  if (last?.endingQuantity != null && quantity > last.endingQuantity) {
    throw invalid(`Quantity: must be at most ${last.endingQuantity} for this component's price brackets.`, 'quantity');
  }
  let total: Decimal = new MoneyDecimal(0);
  if (quantity > 0) {
    switch (pricing.scheme) {
      case 'per_unit':
      case 'tiered':
        for (const bracket of brackets) {
          const top = Math.min(quantity, bracket.endingQuantity ?? quantity);
          const units = top - bracket.startingQuantity + 1;
          if (units > 0) total = total.plus(new MoneyDecimal(bracket.unitPrice).times(units));
        }
        break;
      case 'volume': {
        const bracket = bracketFor(pricing, quantity);
        if (bracket) total = new MoneyDecimal(bracket.unitPrice).times(quantity);
        break;
      }
      case 'stairstep': {
        const bracket = bracketFor(pricing, quantity);
        if (bracket) total = new MoneyDecimal(bracket.unitPrice);
        break;
      }
      default:
        throw invalid(`Pricing scheme: '${String(pricing.scheme)}' is not supported.`, 'pricing_scheme');
    }
  }
  return decimalToMinor(total, currency, mode, 'Price');
}

/** The bracket that contains `quantity`, or undefined when it lies below the first bracket (or beyond a closed last one). */
export function bracketFor(pricing: ComponentPricing, quantity: number): PriceBracket | undefined {
  return pricing.brackets.find(
    (b) => quantity >= b.startingQuantity && (b.endingQuantity === null || quantity <= b.endingQuantity),
  );
}

/** True when two pricings say the same thing (same scheme, same brackets, equal unit prices). */
export function samePricing(a: ComponentPricing, b: ComponentPricing): boolean {
  if (a.scheme !== b.scheme || a.brackets.length !== b.brackets.length) return false;
  return a.brackets.every((x, i) => {
    const y = b.brackets[i];
    return (
      y !== undefined &&
      x.startingQuantity === y.startingQuantity &&
      x.endingQuantity === y.endingQuantity &&
      new MoneyDecimal(x.unitPrice).eq(y.unitPrice)
    );
  });
}

function parseBracket(raw: PriceBracketInput, problems: UniqueMessages): PriceBracket | undefined {
  const start = wholeNumber(raw.startingQuantity, 'Starting quantity', 'starting_quantity', problems);
  const rawEnd = raw.endingQuantity;
  const end =
    rawEnd === undefined || rawEnd === null || rawEnd === ''
      ? null
      : wholeNumber(rawEnd, 'Ending quantity', 'ending_quantity', problems);
  const price = parseUnitPrice(raw.unitPrice, problems);
  if (start === undefined || end === undefined || price === undefined) return undefined;
  return { startingQuantity: start, endingQuantity: end, unitPrice: price };
}

function wholeNumber(value: unknown, field: string, attribute: string, problems: UniqueMessages): number | undefined {
  if (value === undefined || value === null || value === '') {
    problems.add(`${field}: cannot be blank.`, attribute);
    return undefined;
  }
  try {
    const parsed = parseWireDecimal(value, { field, attribute });
    if (!parsed.isInteger()) problems.add(`${field}: must be an integer.`, attribute);
    else if (!Number.isSafeInteger(parsed.toNumber())) problems.add(`${field}: is too large.`, attribute);
    else return parsed.toNumber();
  } catch (error) {
    problems.capture(error);
  }
  return undefined;
}

function parseUnitPrice(value: unknown, problems: UniqueMessages): string | undefined {
  if (value === undefined || value === null || value === '') {
    problems.add('Unit price: cannot be blank.', 'unit_price');
    return undefined;
  }
  try {
    // Canonical form without exponent or trailing zeros, so equal prices compare equal as strings.
    // The minimum and the number of places are bracket rules, checked by validateBrackets.
    return parseWireDecimal(value, { field: 'Unit price', attribute: 'unit_price' }).toFixed();
  } catch (error) {
    problems.capture(error);
    return undefined;
  }
}

function checkQuantities(start: number, end: number | null, problems: UniqueMessages): void {
  if (!Number.isSafeInteger(start) || start < 1) {
    problems.add('Starting quantity: must be greater than or equal to 1.', 'starting_quantity');
  }
  if (end !== null && (!Number.isSafeInteger(end) || end < start)) {
    problems.add('Ending quantity: must be greater than or equal to the starting quantity.', 'ending_quantity');
  }
}

function checkUnitPrice(price: string, problems: UniqueMessages): boolean {
  let value: Decimal;
  try {
    value = parseWireDecimal(price, { field: 'Unit price', attribute: 'unit_price' });
  } catch (error) {
    problems.capture(error);
    return false;
  }
  if (value.lt(MIN_UNIT_PRICE)) {
    problems.add(`Unit price: must be at least ${MIN_UNIT_PRICE}.`, 'unit_price');
    return false;
  }
  if (value.decimalPlaces() > UNIT_PRICE_DECIMAL_PLACES) {
    problems.add(`Unit price: must have at most ${UNIT_PRICE_DECIMAL_PLACES} decimal places.`, 'unit_price');
    return false;
  }
  return true;
}

function assertQuantity(quantity: number): void {
  if (!Number.isSafeInteger(quantity) || quantity < 0) {
    throw invalid('Quantity: must be a whole number greater than or equal to 0.', 'quantity');
  }
}

/**
 * A collector that keeps each message once: several brackets with the same fault give one
 * "Unit price: must be at least 0.0001." rather than a list of repeats.
 */
class UniqueMessages {
  readonly #seen = new Map<string, string | undefined>();

  add(message: string, attribute?: string): void {
    if (!this.#seen.has(message)) this.#seen.set(message, attribute);
  }

  /** Records the details of a validation error; anything else is a bug and propagates. */
  capture(error: unknown): void {
    if (!(error instanceof BillingError) || error.code !== 'validation') throw error;
    for (const detail of error.details) this.add(detail.message, detail.attribute);
  }

  merge(errors: ValidationCollector): void {
    try {
      errors.throwIfAny();
    } catch (error) {
      this.capture(error);
    }
  }

  copyTo(errors: ValidationCollector): void {
    for (const [message, attribute] of this.#seen) errors.add(message, attribute);
  }

  throwIfAny(): void {
    const errors = new ValidationCollector();
    this.copyTo(errors);
    errors.throwIfAny();
  }
}
