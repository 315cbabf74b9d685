import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import {
  allocate,
  allocateEvenly,
  applyPercentage,
  assertCurrency,
  assertMinor,
  currencyMinorDigits,
  DEFAULT_ROUNDING_MODE,
  decimalRounding,
  decimalToMinor,
  MoneyDecimal,
  minorToDecimal,
  parseMajorAmount,
  parseMinorAmount,
  parsePercentage,
  parseWireDecimal,
  prorate,
  ROUNDING_MODES,
  type RoundingMode,
  roundQuotient,
  roundToMinor,
  sumMinor,
  toMajorString,
  toMoneyDecimal,
} from '../../src/domain/money/index.js';
import { BillingError } from '../../src/errors.js';

const MAX = Number.MAX_SAFE_INTEGER;

/** Runs `fn`, expects a validation BillingError, and returns it for further checks. */
function validationError(fn: () => unknown): BillingError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(BillingError);
  const error = caught as BillingError;
  expect(error.code).toBe('validation');
  return error;
}

/** The single message of the validation error `fn` throws. */
function messageOf(fn: () => unknown): string {
  const error = validationError(fn);
  expect(error.details).toHaveLength(1);
  return error.message;
}

describe('currency', () => {
  it('reads minor digits from Intl', () => {
    expect(currencyMinorDigits('USD')).toBe(2);
    expect(currencyMinorDigits('JPY')).toBe(0);
    expect(currencyMinorDigits('KWD')).toBe(3);
    expect(currencyMinorDigits('EUR')).toBe(2);
    expect(currencyMinorDigits('BHD')).toBe(3);
    expect(currencyMinorDigits('CLP')).toBe(0);
  });

  it('gives the same answer when cached and for lower case', () => {
    expect(currencyMinorDigits('kwd')).toBe(3);
    expect(currencyMinorDigits('KWD')).toBe(3);
    expect(currencyMinorDigits('jpy')).toBe(0);
  });

  it('accepts supported codes case-insensitively and upper-cases them', () => {
    expect(assertCurrency('usd')).toBe('USD');
    expect(assertCurrency('Jpy')).toBe('JPY');
    expect(assertCurrency('KWD')).toBe('KWD');
  });

  it('rejects unknown, malformed and non-string codes on attribute currency', () => {
    const error = validationError(() => assertCurrency('XYZ'));
    expect(error.message).toBe("Currency: 'XYZ' is not a supported ISO 4217 currency.");
    expect(error.details[0]?.attribute).toBe('currency');
    expect(messageOf(() => assertCurrency('US'))).toBe("Currency: 'US' is not a supported ISO 4217 currency.");
    expect(messageOf(() => assertCurrency(''))).toBe("Currency: '' is not a supported ISO 4217 currency.");
    expect(messageOf(() => assertCurrency(' USD'))).toBe("Currency: ' USD' is not a supported ISO 4217 currency.");
    expect(messageOf(() => assertCurrency(42))).toBe("Currency: '42' is not a supported ISO 4217 currency.");
    expect(messageOf(() => currencyMinorDigits('XYZ'))).toBe("Currency: 'XYZ' is not a supported ISO 4217 currency.");
  });
});

describe('MoneyDecimal', () => {
  it('is a clone that leaves the global decimal.js configuration alone', () => {
    expect(MoneyDecimal).not.toBe(Decimal);
    expect(MoneyDecimal.precision).toBe(40);
    expect(Decimal.precision).toBe(20);
    expect(Decimal.rounding).toBe(Decimal.ROUND_HALF_UP);
  });

  it('converts inputs and rejects non-finite ones', () => {
    expect(toMoneyDecimal('1.5').toString()).toBe('1.5');
    expect(toMoneyDecimal(10.1).toString()).toBe('10.1');
    expect(toMoneyDecimal(12345678901234567890n).toString()).toBe('12345678901234567890');
    expect(toMoneyDecimal(new Decimal('2.25')).toString()).toBe('2.25');
    expect(messageOf(() => toMoneyDecimal(Number.NaN))).toBe('Amount: is not a number.');
    expect(messageOf(() => toMoneyDecimal('abc', 'Ratio'))).toBe('Ratio: is not a number.');
    expect(messageOf(() => toMoneyDecimal(Number.POSITIVE_INFINITY))).toBe('Amount: is not a number.');
  });
});

describe('rounding', () => {
  it('defaults to half_up and lists all seven modes', () => {
    expect(DEFAULT_ROUNDING_MODE).toBe('half_up');
    expect([...ROUNDING_MODES].sort()).toEqual(['ceiling', 'down', 'floor', 'half_down', 'half_even', 'half_up', 'up']);
  });

  it('maps modes onto decimal.js constants', () => {
    expect(decimalRounding('up')).toBe(Decimal.ROUND_UP);
    expect(decimalRounding('down')).toBe(Decimal.ROUND_DOWN);
    expect(decimalRounding('ceiling')).toBe(Decimal.ROUND_CEIL);
    expect(decimalRounding('floor')).toBe(Decimal.ROUND_FLOOR);
    expect(decimalRounding('half_up')).toBe(Decimal.ROUND_HALF_UP);
    expect(decimalRounding('half_down')).toBe(Decimal.ROUND_HALF_DOWN);
    expect(decimalRounding('half_even')).toBe(Decimal.ROUND_HALF_EVEN);
    expect(messageOf(() => decimalRounding('bankers' as RoundingMode))).toBe(
      "Rounding mode: 'bankers' is not supported.",
    );
  });

  // value -> expected result per mode
  const table: ReadonlyArray<readonly [string, Record<RoundingMode, number>]> = [
    ['2.5', { half_up: 3, half_even: 2, half_down: 2, up: 3, down: 2, ceiling: 3, floor: 2 }],
    ['3.5', { half_up: 4, half_even: 4, half_down: 3, up: 4, down: 3, ceiling: 4, floor: 3 }],
    ['-2.5', { half_up: -3, half_even: -2, half_down: -2, up: -3, down: -2, ceiling: -2, floor: -3 }],
    ['2.4', { half_up: 2, half_even: 2, half_down: 2, up: 3, down: 2, ceiling: 3, floor: 2 }],
    ['2.6', { half_up: 3, half_even: 3, half_down: 3, up: 3, down: 2, ceiling: 3, floor: 2 }],
    ['-2.6', { half_up: -3, half_even: -3, half_down: -3, up: -3, down: -2, ceiling: -2, floor: -3 }],
    ['7', { half_up: 7, half_even: 7, half_down: 7, up: 7, down: 7, ceiling: 7, floor: 7 }],
  ];

  for (const [value, expected] of table) {
    for (const mode of ROUNDING_MODES) {
      it(`roundToMinor(${value}, ${mode}) is ${expected[mode]}`, () => {
        expect(roundToMinor(value, mode)).toBe(expected[mode]);
        expect(roundToMinor(new Decimal(value), mode)).toBe(expected[mode]);
      });
      it(`roundQuotient(${value} as n/10, ${mode}) is ${expected[mode]}`, () => {
        const tenths = BigInt(new Decimal(value).times(10).toFixed(0));
        expect(roundQuotient(tenths, 10n, mode)).toBe(BigInt(expected[mode]));
      });
    }
  }

  it('uses half_up by default and never returns negative zero', () => {
    expect(roundToMinor('0.5')).toBe(1);
    expect(roundToMinor('-0.5')).toBe(-1);
    expect(Object.is(roundToMinor('-0.4'), 0)).toBe(true);
    expect(Object.is(roundToMinor('-0.9', 'down'), 0)).toBe(true);
  });

  it('rounds digits beyond the configured precision exactly', () => {
    // 45 significant digits: a precision-limited rounding would see ...5 and go up.
    expect(roundToMinor('1.49999999999999999999999999999999999999999999', 'half_up')).toBe(1);
    expect(roundQuotient(10n ** 50n - 1n, 2n * 10n ** 49n, 'half_up')).toBe(5n);
  });

  it('throws too large past the safe range and rejects bad input', () => {
    expect(roundToMinor(String(MAX))).toBe(MAX);
    expect(roundToMinor(`-${MAX}`)).toBe(-MAX);
    expect(messageOf(() => roundToMinor('9007199254740992'))).toBe('Amount: is too large.');
    expect(messageOf(() => roundToMinor('9007199254740991.5', 'up'))).toBe('Amount: is too large.');
    expect(messageOf(() => roundToMinor('1e30'))).toBe('Amount: is too large.');
    expect(messageOf(() => roundToMinor('abc'))).toBe('Amount: is not a number.');
    expect(messageOf(() => roundQuotient(1n, 0n, 'half_up'))).toBe('Denominator: must be greater than 0.');
  });
});

describe('minor units', () => {
  it('assertMinor accepts safe integers and names the problem otherwise', () => {
    expect(() => assertMinor(0)).not.toThrow();
    expect(() => assertMinor(-MAX)).not.toThrow();
    expect(() => assertMinor(MAX)).not.toThrow();
    expect(messageOf(() => assertMinor(10.5, 'Price'))).toBe('Price: must be an integer.');
    expect(messageOf(() => assertMinor(MAX + 1))).toBe('Amount: is too large.');
    expect(messageOf(() => assertMinor(Number.POSITIVE_INFINITY))).toBe('Amount: is too large.');
    expect(messageOf(() => assertMinor(Number.NaN))).toBe('Amount: is not a number.');
    expect(messageOf(() => assertMinor('10'))).toBe('Amount: is not a number.');
    expect(messageOf(() => assertMinor(null))).toBe('Amount: is not a number.');
    expect(validationError(() => assertMinor(1.5, 'Price', 'price_in_cents')).details[0]?.attribute).toBe(
      'price_in_cents',
    );
  });

  it('sumMinor adds exactly and refuses to pass the safe range', () => {
    expect(sumMinor([])).toBe(0);
    expect(sumMinor([100, -30, 7])).toBe(77);
    expect(sumMinor([MAX, -1, 1])).toBe(MAX);
    expect(Object.is(sumMinor([-5, 5]), 0)).toBe(true);
    expect(messageOf(() => sumMinor([MAX, 1]))).toBe('Amount: is too large.');
    expect(messageOf(() => sumMinor([1, 0.5]))).toBe('Amount: must be an integer.');
  });
});

describe('conversion', () => {
  it('formats minor units as major strings per currency', () => {
    expect(toMajorString(1000, 'USD')).toBe('10.00');
    expect(toMajorString(1000, 'JPY')).toBe('1000');
    expect(toMajorString(1000, 'KWD')).toBe('1.000');
    expect(toMajorString(-500, 'USD')).toBe('-5.00');
    expect(toMajorString(-5, 'USD')).toBe('-0.05');
    expect(toMajorString(5, 'KWD')).toBe('0.005');
    expect(toMajorString(0, 'USD')).toBe('0.00');
    expect(toMajorString(-0, 'USD')).toBe('0.00');
    expect(toMajorString(0, 'JPY')).toBe('0');
    expect(toMajorString(-7, 'JPY')).toBe('-7');
    expect(toMajorString(MAX, 'USD')).toBe('90071992547409.91');
    expect(toMajorString(-MAX, 'KWD')).toBe('-9007199254740.991');
    expect(toMajorString(1, 'usd')).toBe('0.01');
  });

  it('rejects non-minor amounts and unknown currencies when formatting', () => {
    expect(messageOf(() => toMajorString(10.5, 'USD'))).toBe('Amount: must be an integer.');
    expect(messageOf(() => toMajorString(MAX + 1, 'USD'))).toBe('Amount: is too large.');
    expect(messageOf(() => toMajorString(1, 'XYZ'))).toBe("Currency: 'XYZ' is not a supported ISO 4217 currency.");
  });

  it('minorToDecimal is exact', () => {
    expect(minorToDecimal(1050, 'USD').toString()).toBe('10.5');
    expect(minorToDecimal(1050, 'JPY').toString()).toBe('1050');
    expect(minorToDecimal(-1, 'KWD').toString()).toBe('-0.001');
    expect(minorToDecimal(MAX, 'USD').toString()).toBe('90071992547409.91');
  });

  it('decimalToMinor rounds with the named mode', () => {
    expect(decimalToMinor('10.005', 'USD')).toBe(1001);
    expect(decimalToMinor('10.005', 'USD', 'half_even')).toBe(1000);
    expect(decimalToMinor('10.005', 'USD', 'down')).toBe(1000);
    expect(decimalToMinor('-10.005', 'USD', 'floor')).toBe(-1001);
    expect(decimalToMinor('-10.005', 'USD', 'ceiling')).toBe(-1000);
    expect(decimalToMinor(new Decimal('1.5'), 'JPY', 'half_even')).toBe(2);
    expect(decimalToMinor('2.5', 'JPY', 'half_even')).toBe(2);
    expect(decimalToMinor('1.0005', 'KWD')).toBe(1001);
    expect(decimalToMinor(10.1, 'USD')).toBe(1010);
    // More digits than the clone's precision: rounding first keeps this exact.
    expect(decimalToMinor('0.00499999999999999999999999999999999999999999', 'USD')).toBe(0);
    expect(messageOf(() => decimalToMinor('90071992547409.92', 'USD'))).toBe('Amount: is too large.');
    expect(messageOf(() => decimalToMinor('NaN', 'USD'))).toBe('Amount: is not a number.');
  });
});

describe('parseWireDecimal', () => {
  it('reads plain decimals and normalises negative zero', () => {
    expect(parseWireDecimal(' 12.50 ').toString()).toBe('12.5');
    expect(parseWireDecimal(3n).toString()).toBe('3');
    expect(parseWireDecimal('-0.00').isNegative()).toBe(false);
    expect(parseWireDecimal(-0).isNegative()).toBe(false);
    expect(messageOf(() => parseWireDecimal('+5', { field: 'Quantity' }))).toBe('Quantity: is not a number.');
  });
});

describe('parseMajorAmount', () => {
  it('parses strings and numbers into minor units', () => {
    expect(parseMajorAmount('10.00', 'USD')).toBe(1000);
    expect(parseMajorAmount('10', 'USD')).toBe(1000);
    expect(parseMajorAmount(10, 'USD')).toBe(1000);
    expect(parseMajorAmount(10.5, 'USD')).toBe(1050);
    expect(parseMajorAmount(10.1, 'USD')).toBe(1010);
    expect(parseMajorAmount(0.07, 'USD')).toBe(7);
    expect(parseMajorAmount('  19.99\n', 'USD')).toBe(1999);
    expect(parseMajorAmount('0', 'USD')).toBe(0);
    expect(parseMajorAmount('007.5', 'USD')).toBe(750);
    expect(parseMajorAmount('1000', 'JPY')).toBe(1000);
    expect(parseMajorAmount('1.000', 'KWD')).toBe(1000);
    expect(parseMajorAmount('1.234', 'KWD')).toBe(1234);
    expect(parseMajorAmount('10.000', 'USD')).toBe(1000);
    expect(parseMajorAmount('5.0', 'JPY')).toBe(5);
    expect(parseMajorAmount(25n, 'USD')).toBe(2500);
  });

  it('accepts negatives only when allowed', () => {
    expect(parseMajorAmount('-5.00', 'USD', { allowNegative: true })).toBe(-500);
    expect(parseMajorAmount(-0.01, 'USD', { allowNegative: true })).toBe(-1);
    expect(messageOf(() => parseMajorAmount('-5.00', 'USD'))).toBe('Amount: must be greater than or equal to 0.');
    expect(messageOf(() => parseMajorAmount(-1, 'JPY'))).toBe('Amount: must be greater than or equal to 0.');
    expect(Object.is(parseMajorAmount('-0.00', 'USD'), 0)).toBe(true);
  });

  const notNumbers: ReadonlyArray<readonly [string, unknown]> = [
    ['null', null],
    ['undefined', undefined],
    ["''", ''],
    ["'   '", '   '],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
    ["'1e3'", '1e3'],
    ["'abc'", 'abc'],
    ["'0x10'", '0x10'],
    ["'+5'", '+5'],
    ["'.5'", '.5'],
    ["'5.'", '5.'],
    ["'1,000.00'", '1,000.00'],
    ["'10 00'", '10 00'],
    ["'NaN'", 'NaN'],
    ["'Infinity'", 'Infinity'],
    ["'١٢'", '١٢'],
    ['object', { amount: 10 }],
    ['array', [10]],
    ['true', true],
    ['false', false],
  ];
  for (const [name, input] of notNumbers) {
    it(`rejects ${name} as not a number`, () => {
      expect(messageOf(() => parseMajorAmount(input, 'USD'))).toBe('Amount: is not a number.');
    });
  }

  it('rejects more decimal places than the currency has, naming the currency', () => {
    expect(messageOf(() => parseMajorAmount('10.001', 'USD'))).toBe('Amount: has more decimal places than USD allows.');
    expect(messageOf(() => parseMajorAmount('10.5', 'JPY'))).toBe('Amount: has more decimal places than JPY allows.');
    expect(messageOf(() => parseMajorAmount('1.0001', 'kwd'))).toBe('Amount: has more decimal places than KWD allows.');
    expect(messageOf(() => parseMajorAmount(0.1 + 0.2, 'USD'))).toBe(
      'Amount: has more decimal places than USD allows.',
    );
    expect(messageOf(() => parseMajorAmount('10.0010', 'USD'))).toBe(
      'Amount: has more decimal places than USD allows.',
    );
  });

  it('rejects amounts whose minor value is not a safe integer', () => {
    expect(parseMajorAmount('90071992547409.91', 'USD')).toBe(MAX);
    expect(parseMajorAmount('-90071992547409.91', 'USD', { allowNegative: true })).toBe(-MAX);
    expect(parseMajorAmount(String(MAX), 'JPY')).toBe(MAX);
    expect(messageOf(() => parseMajorAmount('90071992547409.92', 'USD'))).toBe('Amount: is too large.');
    expect(messageOf(() => parseMajorAmount('9007199254740992', 'JPY'))).toBe('Amount: is too large.');
    expect(messageOf(() => parseMajorAmount(1e300, 'USD'))).toBe('Amount: is too large.');
    expect(messageOf(() => parseMajorAmount('1'.repeat(400), 'USD'))).toBe('Amount: is too large.');
  });

  it('uses the field label and attribute from the options', () => {
    const error = validationError(() =>
      parseMajorAmount('x', 'USD', { field: 'Price', attribute: 'product.price_in_cents' }),
    );
    expect(error.message).toBe('Price: is not a number.');
    expect(error.details[0]).toEqual({ message: 'Price: is not a number.', attribute: 'product.price_in_cents' });
    expect(messageOf(() => parseMajorAmount('-1', 'USD', { field: 'Price' }))).toBe(
      'Price: must be greater than or equal to 0.',
    );
    expect(error.httpStatus).toBe(422);
  });

  it('rejects an unsupported currency before looking at the amount', () => {
    expect(messageOf(() => parseMajorAmount('10.00', 'XYZ'))).toBe(
      "Currency: 'XYZ' is not a supported ISO 4217 currency.",
    );
  });
});

describe('parseMinorAmount', () => {
  it('parses integer numbers and strings', () => {
    expect(parseMinorAmount(1000)).toBe(1000);
    expect(parseMinorAmount('1000')).toBe(1000);
    expect(parseMinorAmount(' 42 ')).toBe(42);
    expect(parseMinorAmount('0')).toBe(0);
    expect(parseMinorAmount('10.00')).toBe(10);
    expect(parseMinorAmount(7n)).toBe(7);
    expect(parseMinorAmount(String(MAX))).toBe(MAX);
    expect(parseMinorAmount('-5', { allowNegative: true })).toBe(-5);
    expect(parseMinorAmount(-MAX, { allowNegative: true })).toBe(-MAX);
    expect(Object.is(parseMinorAmount(-0), 0)).toBe(true);
  });

  it('rejects fractions as not an integer', () => {
    expect(messageOf(() => parseMinorAmount('10.5'))).toBe('Amount in cents: must be an integer.');
    expect(messageOf(() => parseMinorAmount(10.5))).toBe('Amount in cents: must be an integer.');
    expect(messageOf(() => parseMinorAmount('-10.5'))).toBe('Amount in cents: must be an integer.');
    expect(messageOf(() => parseMinorAmount(0.1, { field: 'Amount' }))).toBe('Amount: must be an integer.');
  });

  it('rejects non-numbers, negatives and values past the safe range', () => {
    for (const input of [null, undefined, '', 'abc', '1e3', '0x10', Number.NaN, Number.POSITIVE_INFINITY, {}, true]) {
      expect(messageOf(() => parseMinorAmount(input))).toBe('Amount in cents: is not a number.');
    }
    expect(messageOf(() => parseMinorAmount('-5'))).toBe('Amount in cents: must be greater than or equal to 0.');
    expect(messageOf(() => parseMinorAmount(-1))).toBe('Amount in cents: must be greater than or equal to 0.');
    expect(messageOf(() => parseMinorAmount('9007199254740992'))).toBe('Amount in cents: is too large.');
    expect(messageOf(() => parseMinorAmount(1e20))).toBe('Amount in cents: is too large.');
    expect(messageOf(() => parseMinorAmount('-9007199254740992', { allowNegative: true }))).toBe(
      'Amount in cents: is too large.',
    );
  });

  it('reports the attribute', () => {
    const error = validationError(() => parseMinorAmount(null, { field: 'Amount', attribute: 'amount_in_cents' }));
    expect(error.details).toEqual([{ message: 'Amount: is not a number.', attribute: 'amount_in_cents' }]);
  });
});

describe('parsePercentage', () => {
  it('parses 0..100 with up to four decimal places', () => {
    expect(parsePercentage('12.5').toString()).toBe('12.5');
    expect(parsePercentage(12.5).toString()).toBe('12.5');
    expect(parsePercentage('0').toString()).toBe('0');
    expect(parsePercentage(100).toString()).toBe('100');
    expect(parsePercentage('100.0000').toString()).toBe('100');
    expect(parsePercentage('33.3333').toString()).toBe('33.3333');
    expect(parsePercentage('5.50000').toString()).toBe('5.5');
    expect(parsePercentage(' 7 ').toString()).toBe('7');
    expect(parsePercentage('-0').isNegative()).toBe(false);
  });

  it('rejects non-numbers, out-of-range values and excess precision', () => {
    for (const input of [null, undefined, '', 'abc', '1e1', Number.NaN, false, []]) {
      expect(messageOf(() => parsePercentage(input))).toBe('Percentage: is not a number.');
    }
    expect(messageOf(() => parsePercentage('-0.0001'))).toBe('Percentage: must be between 0 and 100.');
    expect(messageOf(() => parsePercentage(100.0001))).toBe('Percentage: must be between 0 and 100.');
    expect(messageOf(() => parsePercentage('101'))).toBe('Percentage: must be between 0 and 100.');
    expect(messageOf(() => parsePercentage('33.33333'))).toBe('Percentage: must have at most 4 decimal places.');
    expect(messageOf(() => parsePercentage('5.55', { maxDecimalPlaces: 0, field: 'Discount' }))).toBe(
      'Discount: must have at most 0 decimal places.',
    );
    expect(validationError(() => parsePercentage('x', { attribute: 'percentage' })).details[0]?.attribute).toBe(
      'percentage',
    );
  });
});

describe('allocate', () => {
  it('splits by ratios with the largest remainder, earlier index first on ties', () => {
    expect(allocate(100, [1, 1, 1])).toEqual([34, 33, 33]);
    expect(allocate(5, [1, 1])).toEqual([3, 2]);
    expect(allocate(100, [50, 50])).toEqual([50, 50]);
    expect(allocate(1000, [1, 2, 3])).toEqual([167, 333, 500]);
    expect(allocate(1, [1, 1, 1])).toEqual([1, 0, 0]);
    expect(allocate(2, [1, 1, 1])).toEqual([1, 1, 0]);
    expect(allocate(10, [0.6, 0.3, 0.1])).toEqual([6, 3, 1]);
    // Shares 0.2, 0.7, 0.1 all floor to 0: the largest remainder wins the unit, not the earliest index.
    expect(allocate(1, [0.2, 0.7, 0.1])).toEqual([0, 1, 0]);
    // Shares 1.4, 1.4, 2.2 leave one unit for two equal remainders: the earlier index gets it.
    expect(allocate(5, [7, 7, 11])).toEqual([2, 1, 2]);
    expect(allocate(7, [0, 1, 0])).toEqual([0, 7, 0]);
  });

  it('treats numbers, strings and Decimals as the same exact ratios', () => {
    const expected = allocate(999, [1, 2, 7]);
    expect(allocate(999, ['0.1', '0.2', '0.7'])).toEqual(expected);
    expect(allocate(999, [new Decimal('10'), new MoneyDecimal('20'), 70])).toEqual(expected);
    expect(allocate(999, [0.1, 0.2, 0.7])).toEqual(expected);
    expect(expected).toEqual([100, 200, 699]);
  });

  it('mirrors a negative amount without negative zeros', () => {
    expect(allocate(-100, [1, 1, 1])).toEqual([-34, -33, -33]);
    const parts = allocate(-1, [1, 1]);
    expect(parts).toEqual([-1, 0]);
    expect(Object.is(parts[1], 0)).toBe(true);
    expect(allocate(0, [1, 2]).every((part) => Object.is(part, 0))).toBe(true);
  });

  it('handles the extremes of the safe range exactly', () => {
    const parts = allocate(MAX, [1, 1, 1]);
    expect(parts).toEqual([3002399751580331, 3002399751580330, 3002399751580330]);
    expect(parts.reduce((a, b) => a + b, 0)).toBe(MAX);
    expect(allocate(-MAX, ['1e-30', '1'])).toEqual([0, -MAX]);
  });

  it('rejects empty, negative, non-numeric and all-zero ratios and bad amounts', () => {
    expect(messageOf(() => allocate(100, []))).toBe('Ratios: cannot be empty.');
    expect(messageOf(() => allocate(100, [0, 0]))).toBe('Ratios: must not all be zero.');
    expect(messageOf(() => allocate(100, [1, -1]))).toBe('Ratio: must be greater than or equal to 0.');
    expect(messageOf(() => allocate(100, [1, Number.NaN]))).toBe('Ratio: is not a number.');
    expect(messageOf(() => allocate(100, ['x']))).toBe('Ratio: is not a number.');
    expect(messageOf(() => allocate(10.5, [1]))).toBe('Amount: must be an integer.');
    expect(messageOf(() => allocate(MAX + 1, [1]))).toBe('Amount: is too large.');
  });

  it('allocateEvenly gives larger parts first and sums exactly', () => {
    expect(allocateEvenly(100, 3)).toEqual([34, 33, 33]);
    expect(allocateEvenly(-100, 3)).toEqual([-34, -33, -33]);
    expect(allocateEvenly(10, 1)).toEqual([10]);
    expect(allocateEvenly(2, 4)).toEqual([1, 1, 0, 0]);
    expect(allocateEvenly(MAX, 2)).toEqual([4503599627370496, 4503599627370495]);
    expect(allocateEvenly(-1, 2).map((part) => Object.is(part, 0))).toEqual([false, true]);
    expect(messageOf(() => allocateEvenly(100, 0))).toBe('Count: must be greater than 0.');
    expect(messageOf(() => allocateEvenly(100, 1.5))).toBe('Count: must be greater than 0.');
    expect(messageOf(() => allocateEvenly(1.5, 2))).toBe('Amount: must be an integer.');
  });
});

describe('prorate', () => {
  it('takes an exact fraction of an amount, half-up by default', () => {
    expect(prorate(1000, 15, 30)).toBe(500);
    expect(prorate(1000, 1, 3)).toBe(333);
    expect(prorate(1000, 2, 3)).toBe(667);
    expect(prorate(1, 1, 2)).toBe(1);
    expect(prorate(1, 1, 2, 'half_even')).toBe(0);
    expect(prorate(3, 1, 2, 'half_even')).toBe(2);
    expect(prorate(1, 1, 2, 'half_down')).toBe(0);
    expect(prorate(1000, 2, 3, 'down')).toBe(666);
    expect(prorate(1000, 1, 3, 'up')).toBe(334);
    expect(prorate(-1000, 1, 3, 'floor')).toBe(-334);
    expect(prorate(-1000, 1, 3, 'ceiling')).toBe(-333);
    expect(prorate(-1, 1, 2)).toBe(-1);
    expect(Object.is(prorate(-1, 1, 3), 0)).toBe(true);
  });

  it('prorates over seconds with numbers, bigints and Decimals alike', () => {
    const month = 30 * 86_400;
    const left = 12 * 86_400 + 3_600;
    // 2999 * 1040400 / 2592000 = 1203.7765...
    expect(prorate(2999, left, month)).toBe(1204);
    expect(prorate(2999, BigInt(left), BigInt(month))).toBe(1204);
    expect(prorate(2999, new Decimal(left), new MoneyDecimal(month))).toBe(1204);
    expect(prorate(2999, '0.4013888888', 1)).toBe(1204);
    expect(prorate(1000, '0.5', '1.0')).toBe(500);
    expect(prorate(1000, 3, '1.5')).toBe(2000);
  });

  it('is exact for denominators far past the decimal precision', () => {
    const big = 10n ** 60n;
    // (big/2 - 1) / big is just under one half: precision-limited division would round it to 0.5 and then up.
    expect(prorate(1, big / 2n - 1n, big)).toBe(0);
    expect(prorate(1, big / 2n, big)).toBe(1);
    expect(prorate(MAX, big, big)).toBe(MAX);
  });

  it('rejects a non-positive denominator, bad inputs and results past the safe range', () => {
    expect(messageOf(() => prorate(1000, 1, 0))).toBe('Denominator: must be greater than 0.');
    expect(messageOf(() => prorate(1000, 1, -30))).toBe('Denominator: must be greater than 0.');
    expect(messageOf(() => prorate(1000, 'x', 30))).toBe('Numerator: is not a number.');
    expect(messageOf(() => prorate(1000, 1, Number.NaN))).toBe('Denominator: is not a number.');
    expect(messageOf(() => prorate(1.5, 1, 2))).toBe('Amount: must be an integer.');
    expect(messageOf(() => prorate(MAX, 2, 1))).toBe('Amount: is too large.');
  });
});

describe('applyPercentage', () => {
  it('returns the rounded percentage of an amount', () => {
    expect(applyPercentage(1000, 10)).toBe(100);
    expect(applyPercentage(1999, '12.5')).toBe(250);
    expect(applyPercentage(1999, '12.5', 'down')).toBe(249);
    expect(applyPercentage(1999, '12.5', 'half_even')).toBe(250);
    expect(applyPercentage(50, 1)).toBe(1);
    expect(applyPercentage(50, 1, 'half_even')).toBe(0);
    expect(applyPercentage(50, 1, 'half_down')).toBe(0);
    expect(applyPercentage(1, '33.3333', 'up')).toBe(1);
    expect(applyPercentage(1000, 0)).toBe(0);
    expect(applyPercentage(1000, 100)).toBe(1000);
    expect(applyPercentage(-1999, '12.5')).toBe(-250);
    expect(applyPercentage(1000, parsePercentage('15.0001'))).toBe(150);
    expect(applyPercentage(MAX, 100)).toBe(MAX);
  });

  it('rejects bad percentages and results past the safe range', () => {
    expect(messageOf(() => applyPercentage(1000, Number.NaN))).toBe('Percentage: is not a number.');
    expect(messageOf(() => applyPercentage(MAX, 200))).toBe('Amount: is too large.');
    expect(messageOf(() => applyPercentage(0.5, 10))).toBe('Amount: must be an integer.');
  });
});
