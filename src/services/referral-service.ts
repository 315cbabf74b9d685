import { drawBytes, type RandomSource } from '../domain/signing/random-source.js';
import { BillingError } from '../errors.js';
import type { CommandDeps } from './command-runner.js';
import { loadSite } from './site-lookup.js';

/**
 * A subscription's referral code as the validate endpoint reports it. Codes live on the
 * subscription (unique per site), so `id` is the subscription's id: there is no separate record.
 */
export interface ReferralRecord {
  readonly id: number;
  readonly siteId: number;
  readonly subscriptionId: number;
  readonly code: string;
}

/**
 * The characters of referral codes: upper-case letters and digits without the look-alike pairs
 * 0/O and 1/I, so a code read aloud or copied by hand survives. 32 characters, so one random byte
 * modulo 32 picks each without bias (256 is a multiple of 32).
 */
export const REFERRAL_CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** Length of generated referral codes: 32^8 (about 10^12) codes make a collision at signup rare. */
export const REFERRAL_CODE_LENGTH = 8;

/**
 * A fresh referral code of {@link REFERRAL_CODE_LENGTH} characters from
 * {@link REFERRAL_CODE_ALPHABET}, drawn from `random` (pass `node:crypto`'s `randomBytes`; tests
 * pass a fixed source). Codes are unique-looking, not guaranteed unique: the caller inserts and
 * retries with a new code when storage reports a `conflict`.
 */
export function generateReferralCode(random: RandomSource): string {
  const bytes = drawBytes(random, REFERRAL_CODE_LENGTH);
  let code = '';
  for (const byte of bytes) code += REFERRAL_CODE_ALPHABET[byte % REFERRAL_CODE_ALPHABET.length];
  return code;
}

/** Referral codes: the validate endpoint (`GET /referral_codes/validate`). */
export class ReferralService {
  readonly #deps: CommandDeps;

  constructor(deps: CommandDeps) {
    this.#deps = deps;
  }

  /**
   * The subscription that owns `code` on this site. Generated codes are upper case, so a code typed
   * in lower case is tried upper-cased too. An unknown code is `not_found` with the message
   * "Invalid referral code." and the bare-string body shape (`{"errors":"..."}`), 404 on the wire.
   */
  validate(subdomain: string, code: string): Promise<ReferralRecord> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      const typed = typeof code === 'string' ? code.trim() : '';
      const candidates = typed === '' ? [] : [...new Set([typed, typed.toUpperCase()])];
      for (const candidate of candidates) {
        const subscription = await tx.subscriptions.findByReferralCode(site.id, candidate);
        if (subscription) {
          return { id: subscription.id, siteId: site.id, subscriptionId: subscription.id, code: candidate };
        }
      }
      throw new BillingError('not_found', 'Invalid referral code.', {
        shape: 'string',
        data: { what: 'referral_code' },
      });
    });
  }
}
