import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Digests a string to a fixed 32 bytes. UTF-16LE is used instead of UTF-8 because it is lossless for
 * every JS string (lone surrogates included), so two different strings can never digest alike.
 */
function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf16le').digest();
}

/**
 * Compares two strings without leaking, through timing, where they first differ or whether their
 * lengths differ. Both sides are hashed to 32-byte SHA-256 digests before `timingSafeEqual`, so the
 * comparison never returns early and `timingSafeEqual` never throws on a length mismatch; the only
 * thing the running time reveals is the inputs' lengths, which for our secrets and signatures are
 * fixed by their format anyway. Agrees with `===` for every pair of strings.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * {@link constantTimeEqual} for hex text, ignoring ASCII case: the service documents signatures as
 * "lowercase or uppercase" hex, so `ABC` and `abc` are the same value. Only ASCII letters are folded
 * (not full Unicode case mapping) so that no non-ASCII character can ever be folded onto a hex digit.
 */
export function constantTimeHexEqual(a: string, b: string): boolean {
  return constantTimeEqual(foldAsciiCase(a), foldAsciiCase(b));
}

function foldAsciiCase(text: string): string {
  return text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
}

/**
 * True when `value` is a string of exactly `length` hex digits, in either case. Verifiers check this
 * first so that a malformed signature (wrong type, wrong length, non-hex) is a plain `false`.
 */
export function isHexOfLength(value: unknown, length: number): value is string {
  return typeof value === 'string' && value.length === length && /^[0-9a-fA-F]*$/.test(value);
}

/**
 * True when `candidate` is a string spelling the hex digest `digest` in either case, compared in
 * time that depends only on the digest's length: every character pair is compared and the
 * differences are OR-ed together, with no early exit. Anything else (not a string, another
 * length, a non-hex character) is false, so untrusted input needs no separate check. `digest` must
 * be hex, as `digest('hex')` writes it. This is the fast path for a digest just computed as hex: no
 * Buffer is decoded, no native call is made, no regular expression runs.
 */
export function hexDigestMatches(digest: string, candidate: unknown): boolean {
  const length = digest.length;
  if (typeof candidate !== 'string' || candidate.length !== length) return false;
  let difference = 0;
  for (let i = 0; i < length; i++) {
    const code = candidate.charCodeAt(i);
    // `| 0x20` folds A-F onto a-f and keeps digits. Of every other character only the control
    // characters 0x10-0x19 would fold onto a digit, so anything below 0x20 counts as a difference.
    difference |= ((digest.charCodeAt(i) | 0x20) ^ (code | 0x20)) | (code < 0x20 ? 1 : 0);
  }
  return difference === 0;
}

/**
 * True when `hex` (already checked to be exactly the digest's length in hex digits, either case)
 * spells the same bytes as `digest`. Compares the raw bytes in constant time: no hex encoding of
 * the digest, no second hash — verifying a signature costs little more than computing the HMAC.
 */
export function hexDigestEquals(digest: Buffer, hex: string): boolean {
  const presented = Buffer.from(hex, 'hex');
  return presented.length === digest.length && timingSafeEqual(presented, digest);
}
