import type { Hono } from 'hono';
import type { HttpAppEnv } from '../http-context.js';

/** Price points of products and components. */
export function registerPricePointRoutes(_app: Hono<HttpAppEnv>): void {}
