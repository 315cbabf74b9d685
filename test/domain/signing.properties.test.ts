import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  constantTimeEqual,
  constantTimeHexEqual,
  type DirectRequestSignatureParams,
  directRequestSignature,
  directResponseSignature,
  encodeSecureData,
  encodeWebhookBody,
  type FormParams,
  type FormValue,
  hashSecret,
  parseSecureData,
  parseWebhookBody,
  verifyDirectRequestSignature,
  verifyDirectResponseSignature,
  verifySecret,
  verifyWebhookSignature,
  webhookSignatureHmacSha256,
  webhookSignatureMd5,
} from '../../src/domain/signing/index.js';

// Well-formed Unicode (any code point, no lone surrogates): UTF-8 maps lone surrogates to U+FFFD, so
// two different ill-formed strings can sign alike, which the service's Ruby strings never contain.
const text = fc.string({ unit: 'binary', maxLength: 24 });
const nonEmptyText = fc.string({ unit: 'binary', minLength: 1, maxLength: 24 });
// Every UTF-16 code unit, lone surrogates included, for the comparison that must be exact on any JS string.
const anyJsString = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)) });

const requestParams = fc.record({ apiId: text, timestamp: text, nonce: text, data: text });
type Field = 'apiId' | 'timestamp' | 'nonce' | 'data';
const fields: readonly Field[] = ['apiId', 'timestamp', 'nonce', 'data'];

/** Replaces the code point at `index` (modulo length) of `value` with `replacement`, or undefined if no change. */
function flipCodePoint(value: string, index: number, replacement: string): string | undefined {
  const points = [...value];
  if (points.length === 0) return undefined;
  const at = index % points.length;
  if (points[at] === replacement) return undefined;
  points[at] = replacement;
  return points.join('');
}

const codePoint = fc.string({ unit: 'binary', minLength: 1, maxLength: 1 });
const hexDigit = fc.constantFrom(...'0123456789abcdefABCDEF');

describe('direct signatures (properties)', () => {
  it('sign then verify holds for arbitrary Unicode inputs, in either hex case', () => {
    fc.assert(
      fc.property(requestParams, text, (params, secret) => {
        const signature = directRequestSignature(params, secret);
        expect(signature).toMatch(/^[0-9a-f]{40}$/);
        expect(verifyDirectRequestSignature(params, secret, signature)).toBe(true);
        expect(verifyDirectRequestSignature(params, secret, signature.toUpperCase())).toBe(true);
      }),
    );
  });

  it('changing one character of api_id, timestamp, nonce or data breaks verification', () => {
    fc.assert(
      fc.property(
        requestParams,
        text,
        fc.constantFrom(...fields),
        fc.nat(),
        codePoint,
        (params, secret, field, index, replacement) => {
          const changed = flipCodePoint(params[field], index, replacement);
          fc.pre(changed !== undefined);
          const tampered: DirectRequestSignatureParams = { ...params, [field]: changed };
          const signature = directRequestSignature(params, secret);
          expect(verifyDirectRequestSignature(tampered, secret, signature)).toBe(false);
        },
      ),
    );
  });

  it('changing one character of the signature breaks verification', () => {
    fc.assert(
      fc.property(requestParams, text, fc.nat({ max: 39 }), hexDigit, (params, secret, index, digit) => {
        const signature = directRequestSignature(params, secret);
        fc.pre(signature[index] !== digit.toLowerCase());
        const tampered = signature.slice(0, index) + digit + signature.slice(index + 1);
        expect(verifyDirectRequestSignature(params, secret, tampered)).toBe(false);
      }),
    );
  });

  it('a signature with a non-hex character is rejected, not thrown on', () => {
    fc.assert(
      fc.property(requestParams, text, fc.nat({ max: 39 }), codePoint, (params, secret, index, char) => {
        fc.pre(!/^[0-9a-fA-F]$/.test(char));
        const signature = directRequestSignature(params, secret);
        const tampered = signature.slice(0, index) + char + signature.slice(index + 1);
        expect(verifyDirectRequestSignature(params, secret, tampered)).toBe(false);
      }),
    );
  });

  it('response signatures verify and reject a different api_id', () => {
    fc.assert(
      fc.property(
        fc.record({ apiId: text, timestamp: text, nonce: text, statusCode: text, resultCode: text, callId: text }),
        text,
        nonEmptyText,
        (params, secret, otherApiId) => {
          fc.pre(otherApiId !== params.apiId);
          const signature = directResponseSignature(params, secret);
          expect(verifyDirectResponseSignature(params, secret, signature)).toBe(true);
          expect(verifyDirectResponseSignature(params, secret, signature.toUpperCase())).toBe(true);
          // The verifier signs with its own api_id (reference §1.5), so another id must fail.
          expect(verifyDirectResponseSignature({ ...params, apiId: otherApiId }, secret, signature)).toBe(false);
        },
      ),
    );
  });
});

describe('webhook signatures (properties)', () => {
  it('both algorithms verify their own signature and reject a changed body', () => {
    fc.assert(
      fc.property(text, text, codePoint, fc.nat(), (body, key, replacement, index) => {
        const hmac = webhookSignatureHmacSha256(body, key);
        const md5 = webhookSignatureMd5(body, key);
        expect(verifyWebhookSignature(body, hmac, key)).toBe(true);
        expect(verifyWebhookSignature(body, md5.toUpperCase(), key, 'md5')).toBe(true);
        const changed = flipCodePoint(body, index, replacement);
        if (changed !== undefined) {
          expect(verifyWebhookSignature(changed, hmac, key)).toBe(false);
          expect(verifyWebhookSignature(changed, md5, key, 'md5')).toBe(false);
        }
      }),
    );
  });
});

// Keys that qs cannot give back as written: brackets are structure; canonical integers under a
// parent become list indices; Object.prototype names are dropped (allowPrototypes: false); and
// an empty key has no name at all.
function isRoundTrippableKey(key: string): boolean {
  return key.length > 0 && !/[[\]]/.test(key) && !/^[0-9]+$/.test(key) && !(key in Object.prototype);
}

const formKey = fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }).filter(isRoundTrippableKey);
const formLeaf = fc.string({ unit: 'binary', minLength: 1, maxLength: 12 });
const dictionary = <T>(values: fc.Arbitrary<T>) =>
  fc.dictionary(formKey, values, { minKeys: 1, maxKeys: 4, noNullPrototype: true });

/** Non-empty records nested up to 3 levels with non-empty string leaves; `list`, when given, may replace a leaf. */
function nestedRecord(list: fc.Arbitrary<readonly FormValue[]> | undefined): fc.Arbitrary<FormParams> {
  const leaf = list === undefined ? formLeaf : fc.oneof(formLeaf, list);
  const level3 = dictionary(leaf);
  const level2 = dictionary(fc.oneof(leaf, level3));
  return dictionary(fc.oneof(leaf, level2));
}

describe('form encodings round-trip (properties)', () => {
  it('parseSecureData(encodeSecureData(x)) deep-equals x (Rack-style lists of strings included)', () => {
    fc.assert(
      fc.property(nestedRecord(fc.array(formLeaf, { minLength: 1, maxLength: 4 })), (record) => {
        expect(parseSecureData(encodeSecureData(record))).toEqual(record);
      }),
    );
  });

  it('secure data uses only the Ruby www-form alphabet outside the structure', () => {
    fc.assert(
      fc.property(nestedRecord(undefined), (record) => {
        expect(encodeSecureData(record)).toMatch(/^[A-Za-z0-9*\-._+%=&[\]]*$/);
      }),
    );
  });

  it('parseWebhookBody(encodeWebhookBody(x)) deep-equals x (indexed lists of strings and records included)', () => {
    const listItem = fc.oneof(formLeaf, dictionary(formLeaf));
    fc.assert(
      fc.property(nestedRecord(fc.array(listItem, { minLength: 1, maxLength: 4 })), (record) => {
        const body = encodeWebhookBody(record);
        expect(body).not.toMatch(/[ +!'()*]/);
        expect(parseWebhookBody(body)).toEqual(record);
      }),
    );
  });
});

describe('constant-time comparison (properties)', () => {
  it('constantTimeEqual agrees with === on any JS strings', () => {
    const pair = fc.oneof(
      fc.tuple(anyJsString, anyJsString),
      anyJsString.map((s) => [s, s] as const),
      fc.tuple(anyJsString, anyJsString).map(([a, b]) => [a, a + b] as const),
    );
    fc.assert(
      fc.property(pair, ([a, b]) => {
        expect(constantTimeEqual(a, b)).toBe(a === b);
        expect(constantTimeEqual(b, a)).toBe(a === b);
      }),
    );
  });

  it('constantTimeHexEqual agrees with case-insensitive === on hex strings', () => {
    const hex = fc.string({ unit: hexDigit, maxLength: 16 });
    fc.assert(
      fc.property(hex, hex, (a, b) => {
        expect(constantTimeHexEqual(a, b)).toBe(a.toLowerCase() === b.toLowerCase());
        expect(constantTimeHexEqual(a, a.toUpperCase())).toBe(true);
      }),
    );
  });

  it('verifySecret(s, hashSecret(t)) holds exactly when s === t', () => {
    fc.assert(
      fc.property(text, text, (s, t) => {
        expect(verifySecret(s, hashSecret(s))).toBe(true);
        expect(verifySecret(s, hashSecret(t))).toBe(s === t);
      }),
    );
  });
});
