import type { Hono } from 'hono';
import type { HttpAppEnv } from '../http-context.js';

/** Churn reason codes, coupon subcodes and usage, site and webhook settings. */
export function registerReasonCodeRoutes(_app: Hono<HttpAppEnv>): void {}
