import type { ReferralRecord } from '../services/referral-service.js';

/** A referral code as the validate endpoint writes it: ids as integers. */
export interface ReferralCodeJson {
  readonly id: number;
  readonly site_id: number;
  readonly subscription_id: number;
  readonly code: string;
}

/** `{"referral_code":{...}}`, the 200 body of `GET /referral_codes/validate.json`. */
export function serializeReferralCode(referral: ReferralRecord): { referral_code: ReferralCodeJson } {
  return {
    referral_code: {
      id: referral.id,
      site_id: referral.siteId,
      subscription_id: referral.subscriptionId,
      code: referral.code,
    },
  };
}
