import type { Hono } from 'hono';
import type { HttpAppEnv } from '../http-context.js';

/** Adding and removing a subscription's coupons. */
export function registerSubscriptionCouponRoutes(_app: Hono<HttpAppEnv>): void {}
