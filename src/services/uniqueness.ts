import { BillingError } from '../errors.js';
import type { CommandContext } from './command-runner.js';

/** How long a uniqueness token blocks a repeat (60 minutes). */
export const UNIQUENESS_TOKEN_TTL_MS = 60 * 60_000;

/** The idempotency scope uniqueness tokens are claimed in; one scope per site for every command kind. */
export const UNIQUENESS_SCOPE = 'uniqueness_token';

/**
 * Claims a client's `uniqueness_token` inside the command's own transaction. The
 * claim commits with the command or rolls back with it, so a command rejected for its input frees
 * the token for a corrected retry, while of N concurrent commands carrying one token exactly one
 * runs (the port's claim is race-safe). One scope serves every command kind, because the service
 * answers a repeated token with 409 whether the first use was a charge, an adjustment, a credit or
 * a refund. A missing or empty token claims nothing.
 */
export async function claimUniquenessToken(
  ctx: CommandContext,
  siteId: number,
  token: string | null | undefined,
): Promise<void> {
  if (token === undefined || token === null || token === '') return;
  const expiresAt = new Date(ctx.now.getTime() + UNIQUENESS_TOKEN_TTL_MS);
  const claimed = await ctx.tx.idempotency.claim(siteId, UNIQUENESS_SCOPE, String(token), ctx.now, expiresAt);
  if (!claimed) throw new BillingError('duplicate_submission', 'DuplicatePrevention::DuplicateSubmissionError');
}
