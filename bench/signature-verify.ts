/**
 * Section 3 (issue 11): direct-post request signature verification. The engine's
 * `verifyDirectRequestSignature` (format check, HMAC-SHA1, constant-time comparison) against the
 * raw baseline the issue names: `createHmac('sha1', secret).update(message).digest('hex')` and
 * `===`, on the same inputs. Both are synchronous, so each timed run calls them in batches and
 * reads the clock once per batch.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { directRequestSignature, verifyDirectRequestSignature } from 'billing-engine/chargify';
import type { BenchContext } from './bench-context.js';
import { comparePaired, formatRatio, formatSummary, type Runner, timeBox } from './measure.js';

/** Issue 11's target: verification at no less than this share of the raw HMAC loop's rate. */
export const SIGNATURE_TARGET_SHARE = 0.8;

const BATCH = 256;

/** Runs section 3 and reports it. */
export async function runSignatureSection(context: BenchContext): Promise<void> {
  const { report, config } = context;
  report.section('3. Direct-post signature verification (issue 11)');
  // A realistic post: api_id, a seconds timestamp, a nonce, and a secure[data] query string.
  const secret = 'b7d4e2f9a1c3e5d7f9b1a3c5e7d9f1b3a5c7e9d1';
  const params = {
    apiId: '2c4e6a8b-1d3f-5a7c-9e1b-3d5f7a9c1e3b',
    timestamp: '1767225600',
    nonce: '5f2a9c1e7b3d4f6a8c0e2b4d6f8a0c2e',
    data: 'redirect_uri=https%3A%2F%2Fmerchant.example%2Fdone&signup[product][handle]=basic&signup[customer][email]=a%40example.com',
  };
  const message = params.apiId + params.timestamp + params.nonce + params.data;
  const signature = directRequestSignature(params, secret);
  const expected = Buffer.from(signature, 'hex');
  if (!verifyDirectRequestSignature(params, secret, signature))
    throw new Error('The engine rejects its own signature.');
  if (createHmac('sha1', secret).update(message).digest('hex') !== signature) {
    throw new Error('The raw HMAC differs from the engine signature.');
  }

  let sink = 0;
  const engine: Runner = (ms) =>
    timeBox(() => {
      for (let i = 0; i < BATCH; i++) if (verifyDirectRequestSignature(params, secret, signature)) sink++;
      return BATCH;
    }, ms);
  const raw: Runner = (ms) =>
    timeBox(() => {
      for (let i = 0; i < BATCH; i++)
        if (createHmac('sha1', secret).update(message).digest('hex') === signature) sink++;
      return BATCH;
    }, ms);
  // Not a baseline the target is judged against: what a constant-time compare of the raw digest
  // bytes costs, to show where the engine's time goes.
  const rawConstantTime: Runner = (ms) =>
    timeBox(() => {
      for (let i = 0; i < BATCH; i++)
        if (timingSafeEqual(createHmac('sha1', secret).update(message).digest(), expected)) sink++;
      return BATCH;
    }, ms);
  const result = await comparePaired({ engine, raw, rawConstantTime }, config);
  if (sink === 0) throw new Error('No verification succeeded.');

  const share = result.engine.median / result.raw.median;
  report.note(
    `Message ${message.length} characters; ${config.runs} alternating timed run(s) of ${config.timeBoxMs} ms after ` +
      `${config.warmUpMs} ms warm-up; median (min-max) verifications/s.`,
  );
  report.table(
    ['what', 'verifications/s', 'engine/raw'],
    [
      ['engine verifyDirectRequestSignature', formatSummary(result.engine), formatRatio(share)],
      ["raw createHmac('sha1').digest('hex') ===", formatSummary(result.raw), '1.00x'],
      [
        'raw HMAC + timingSafeEqual on digest bytes (reference)',
        formatSummary(result.rawConstantTime),
        formatRatio(result.rawConstantTime.median / result.raw.median),
      ],
    ],
  );
  report.ratio(`engine/raw signature verification: ${formatRatio(share)} (throughput; share of the raw loop's rate)`);
  report.target(
    `issue 11: verification at >= ${Math.round(SIGNATURE_TARGET_SHARE * 100)}% of the raw HMAC loop`,
    share >= SIGNATURE_TARGET_SHARE,
    `${(share * 100).toFixed(0)}% of raw`,
  );
}
