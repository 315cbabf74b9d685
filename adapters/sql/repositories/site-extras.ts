/** Churn reason codes and coupon subcodes on SQL. */
import type { CouponSubcodesRepository, ReasonCodesRepository } from 'billing-engine';
import type { RepositoryContext } from './repository-context.js';

/** Builds the reason-codes repository of one transaction. */
export function createReasonCodesRepository(_ctx: RepositoryContext): ReasonCodesRepository {
  return {};
}

/** Builds the coupon-subcodes repository of one transaction. */
export function createCouponSubcodesRepository(_ctx: RepositoryContext): CouponSubcodesRepository {
  return {};
}
