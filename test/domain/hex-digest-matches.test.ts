import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hexDigestMatches } from '../../src/domain/signing/constant-time-equal.js';
import { hashSecret, secretHashMatches } from '../../src/domain/signing/secret-hash.js';

const hexArb = (length: number) => fc.stringMatching(new RegExp(`^[0-9a-fA-F]{${length}}$`));
const digestArb = fc.stringMatching(/^[0-9a-f]{40}$/);

describe('hexDigestMatches (constant-time compare of a hex digest with untrusted text)', () => {
  it('is case-insensitive equality for hex candidates', () => {
    fc.assert(
      fc.property(digestArb, hexArb(40), (digest, candidate) => {
        expect(hexDigestMatches(digest, candidate)).toBe(digest === candidate.toLowerCase());
        expect(hexDigestMatches(digest, digest.toUpperCase())).toBe(true);
      }),
    );
  });

  it('refuses every candidate that is not hex of the digest length, whatever the characters fold to', () => {
    fc.assert(
      fc.property(
        digestArb,
        fc.integer({ min: 0, max: 39 }),
        fc.integer({ min: 0, max: 0xffff }),
        (digest, at, code) => {
          const candidate = `${digest.slice(0, at)}${String.fromCharCode(code)}${digest.slice(at + 1)}`;
          const expected = /^[0-9a-fA-F]$/.test(String.fromCharCode(code)) && digest === candidate.toLowerCase();
          expect(hexDigestMatches(digest, candidate)).toBe(expected);
        },
      ),
      { numRuns: 5000 },
    );
    const digest = 'a'.repeat(20) + '0'.repeat(20);
    // Control characters 0x10-0x19 fold onto the digits with `| 0x20`; they must still differ.
    expect(hexDigestMatches(digest, 'a'.repeat(20) + '\u0010'.repeat(20))).toBe(false);
    expect(hexDigestMatches(digest, 'A'.repeat(20) + '0'.repeat(20))).toBe(true);
    expect(hexDigestMatches(digest, 'A'.repeat(20) + '0'.repeat(19))).toBe(false);
    for (const candidate of [undefined, null, 40, [digest], { digest }])
      expect(hexDigestMatches(digest, candidate)).toBe(false);
  });

  it('sees a difference in any one position', () => {
    const digest = 'a'.repeat(40);
    for (let i = 0; i < 40; i++)
      expect(hexDigestMatches(digest, `${digest.slice(0, i)}b${digest.slice(i + 1)}`)).toBe(false);
  });

  it('secretHashMatches: a stored hash in either case matches, anything malformed does not', () => {
    const hash = hashSecret('key');
    expect(secretHashMatches(hash, hash)).toBe(true);
    expect(secretHashMatches(hash, hash.toUpperCase())).toBe(true);
    expect(secretHashMatches(hashSecret('other'), hash)).toBe(false);
    expect(secretHashMatches(hash, `${hash.slice(0, 63)}g`)).toBe(false);
    expect(secretHashMatches(hash, hash.slice(0, 63))).toBe(false);
    expect(secretHashMatches(hash, '')).toBe(false);
  });
});
