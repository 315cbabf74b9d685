import type { Hono } from 'hono';
import type { HttpAppEnv } from '../http-context.js';

/** Prepayments, service credits, account balances and exports. */
export function registerAccountRoutes(_app: Hono<HttpAppEnv>): void {}
