import type { Hono } from 'hono';
import type { HttpAppEnv } from '../http-context.js';

/** Site statistics, MRR, a resource type's metadata and the site-wide subscription-component list. */
export function registerReportRoutes(_app: Hono<HttpAppEnv>): void {}
