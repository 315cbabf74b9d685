import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  wireBoolean,
  wireCardExpiry,
  wireCardNumber,
  wireCents,
  wireId,
  wireInteger,
  wireIntervalUnit,
  wireText,
  wireTimestampInput,
} from '../../src/wire/index.js';

function accepts<T>(schema: z.ZodType<T>, cases: [unknown, T][]) {
  for (const [input, output] of cases) {
    const result = schema.safeParse(input);
    expect(result.success, JSON.stringify(input)).toBe(true);
    if (result.success) expect(result.data, JSON.stringify(input)).toEqual(output);
  }
}

function refuses(schema: z.ZodType<unknown>, inputs: unknown[], message: string) {
  for (const input of inputs) {
    const result = schema.safeParse(input);
    expect(result.success, String(input)).toBe(false);
    expect(result.error?.issues[0]?.message).toBe(message);
  }
}

describe('wire scalars', () => {
  it('wireId takes positive safe integers as numbers or digit strings', () => {
    accepts(wireId, [
      [106, 106],
      ['106', 106],
      [' 7 ', 7],
    ]);
    refuses(
      wireId,
      [0, -1, 1.5, '1.5', 'abc', '', '0x10', '1e3', 2 ** 53, '9007199254740993', true, null, {}, []],
      'must be a positive whole number.',
    );
  });

  it('wireInteger takes whole numbers, signed, as numbers or strings', () => {
    accepts(wireInteger, [
      [1, 1],
      ['12', 12],
      ['-3', -3],
      [0, 0],
    ]);
    refuses(wireInteger, [1.5, '1.0', 'one', '', true, Number.NaN], 'must be a whole number.');
  });

  it('wireText takes strings as they are and finite numbers as their string', () => {
    accepts(wireText, [
      ['abc', 'abc'],
      ['', ''],
      [10001, '10001'],
      [1.5, '1.5'],
    ]);
    refuses(wireText, [true, {}, [], Number.POSITIVE_INFINITY], 'must be a string.');
  });

  it('wireCents passes numbers and strings through for the engine to parse', () => {
    accepts(wireCents, [
      [1000, 1000],
      ['1000', '1000'],
      ['abc', 'abc'],
    ]);
    refuses(wireCents, [true, {}, []], 'is not a number.');
  });

  it('wireBoolean takes booleans, "true"/"false" and 1/0 flags', () => {
    accepts(wireBoolean, [
      [true, true],
      [false, false],
      ['true', true],
      ['FALSE', false],
      [' 1 ', true],
      ['0', false],
      [1, true],
      [0, false],
    ]);
    refuses(wireBoolean, ['yes', 'on', 2, '', {}, []], 'must be true or false.');
  });

  it('wireCardNumber takes strings, and numbers only while they are exact', () => {
    accepts(wireCardNumber, [
      ['4111 1111 1111 1111', '4111 1111 1111 1111'],
      [4111111111111111, '4111111111111111'],
      [1, '1'],
    ]);
    // A 19-digit card sent as a JSON number has already been rounded by JSON.parse.
    const rounded = JSON.parse('6011000990139424123') as number;
    refuses(wireCardNumber, [rounded, -1, 1.5, true, {}], 'must be a string of digits.');
  });

  it('wireCardExpiry keeps the type the client sent', () => {
    accepts(wireCardExpiry, [
      [12, 12],
      ['12', '12'],
    ]);
    refuses(wireCardExpiry, [true, {}, []], 'must be a number or a string.');
  });

  it('wireIntervalUnit normalises plurals and case', () => {
    accepts(wireIntervalUnit, [
      ['month', 'month'],
      ['Months', 'month'],
      ['day', 'day'],
      ['days', 'day'],
    ]);
    refuses(wireIntervalUnit, ['week', 'year', 1, ''], "must be 'month' or 'day'.");
  });

  it('wireTimestampInput takes strings only (epoch numbers are ambiguous)', () => {
    accepts(wireTimestampInput, [['2026-02-01T00:00:00Z', '2026-02-01T00:00:00Z']]);
    refuses(wireTimestampInput, [1767225600, true], 'must be an ISO 8601 timestamp or a date.');
  });
});
