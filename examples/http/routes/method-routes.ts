import type { Hono } from 'hono';
import { PatternRouter } from 'hono/router/pattern-router';
import { type HttpAppEnv, type HttpContext, sendJson } from '../http-context.js';

/**
 * Paths of the service's API that the server knows but does not serve yet, and that a `{id}.json`
 * route would otherwise take for an id (a misleading "Subscription not found"). They answer a
 * 404 that says so. The SDK coverage test reads this list, so these never count as served.
 */
export const KNOWN_UNSERVED_PATHS: Readonly<Record<string, { method: string; what: string }>> = {};

/**
 * Registers the {@link KNOWN_UNSERVED_PATHS}; called before the routes whose `{id}.json` they
 * would otherwise fall into.
 */
export function registerKnownUnservedRoutes(app: Hono<HttpAppEnv>): void {
  for (const [path, { method, what }] of Object.entries(KNOWN_UNSERVED_PATHS)) {
    app.on(method, path, () =>
      sendJson(404, { errors: [`No route matches ${method} ${path}: ${what} is not supported by this server yet.`] }),
    );
  }
}

/**
 * Registers, after every other route, the answer for a known path asked with a method it does not
 * take: 405 with `Allow`, instead of a 404 that reads as "no such path". The route table is read
 * on the first such request, when every route is in it; a path no route knows goes on to the 404.
 */
export function registerMethodNotAllowed(app: Hono<HttpAppEnv>): void {
  // The routes by the literal first segment of their path, so that a request's path is matched
  // against the few routes that can match it (none, for a path no route knows) rather than all of
  // them: a route whose first segment is literal text matches only paths with that first segment.
  // Routes whose first segment has a parameter or a wildcard are matched against every path.
  let byFirstSegment: Map<string, PatternRouter<string>> | undefined;
  const anyFirstSegment = new PatternRouter<string>();
  const allowedMethods = (path: string): Set<string> => {
    if (byFirstSegment === undefined) {
      byFirstSegment = new Map();
      // `ALL` entries are middleware (and this handler); they do not make a path known.
      for (const route of app.routes) {
        if (route.method === 'ALL') continue;
        const first = firstSegment(route.path);
        let router = anyFirstSegment;
        if (!/[:*{?]/.test(first) && !route.path.includes('*')) {
          router = byFirstSegment.get(first) ?? new PatternRouter<string>();
          byFirstSegment.set(first, router);
        }
        router.add(route.method, route.path, route.method);
      }
    }
    const methods = new Set<string>();
    const literal = byFirstSegment.get(firstSegment(path));
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      if (literal !== undefined && literal.match(method, path)[0].length > 0) methods.add(method);
      else if (anyFirstSegment.match(method, path)[0].length > 0) methods.add(method);
    }
    return methods;
  };
  app.all('*', async (c: HttpContext, next) => {
    const allowed = allowedMethods(c.req.path);
    const method = c.req.method === 'HEAD' ? 'GET' : c.req.method;
    if (allowed.size === 0 || allowed.has(method)) return next();
    const allow = [...allowed].join(', ');
    return sendJson(
      405,
      { errors: [`Method ${c.req.method} is not allowed on ${c.req.path}; it takes ${allow}.`] },
      { allow },
    );
  });
}

/** The first segment of a path: `subscriptions` of `/subscriptions/1.json`, empty for `/`. */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return path.slice(1, end === -1 ? path.length : end);
}
