import type { Hono } from 'hono';
import { type HttpAppEnv, sendJson } from '../http-context.js';
import { serializeReferralCode } from '../wire-bridge.js';
import { queryOf } from './route-params.js';

/**
 * Referral codes: `GET /referral_codes/validate.json?code=` answers 200 with the code's
 * subscription, or 404 `{"errors":"Invalid referral code."}` (a string, as the service writes it).
 */
export function registerReferralRoutes(app: Hono<HttpAppEnv>): void {
  app.get('/referral_codes/validate.json', async (c) => {
    const code = queryOf(c).code;
    // A missing or non-text code is simply not a valid one: the engine answers it with its 404.
    const referral = await c.var.site.referrals.validate(typeof code === 'string' ? code : '');
    return sendJson(200, serializeReferralCode(referral));
  });
}
