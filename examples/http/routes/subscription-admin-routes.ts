import type { Hono } from 'hono';
import type { HttpAppEnv } from '../http-context.js';

/** Signup previews and purging a subscription. */
export function registerSubscriptionAdminRoutes(_app: Hono<HttpAppEnv>): void {}
