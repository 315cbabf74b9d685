/**
 * The routes of the example app, read from Hono's own route table (`app.routes`), so that a route
 * added later shows up in every test that walks them, and a test with no case for it fails.
 */
import type { Hono } from 'hono';
import type { HttpAppEnv } from '../../../examples/http/http-context.js';

/** One route: its method, its path pattern as registered, and a readable key. */
export interface AppRoute {
  readonly method: string;
  /** As registered, e.g. `/subscriptions/:id{[^/]+\.json}`. */
  readonly pattern: string;
  /** `METHOD path` with parameter constraints written plainly: `GET /subscriptions/:id.json`. */
  readonly key: string;
}

/**
 * The path pattern with Hono's parameter constraints written plainly: `:id{[^/]+\.json}` (a last
 * segment that must end in `.json`) becomes `:id.json`, any other `:name{regex}` becomes `:name`.
 */
export function plainPattern(pattern: string): string {
  return pattern.replaceAll(/:(\w+)\{\[\^\/\]\+\\\.json\}/g, ':$1.json').replaceAll(/:(\w+)\{[^}]*\}/g, ':$1');
}

/**
 * Every route of the app once (a route registered with a middleware, such as a body limit,
 * appears in `app.routes` once per handler). The app-wide middlewares (`ALL /*`: authentication,
 * rate limit, body limit) are not routes: nothing answers there on its own.
 */
export function appRoutes(app: Hono<HttpAppEnv>): AppRoute[] {
  const seen = new Map<string, AppRoute>();
  for (const route of app.routes) {
    if (route.method === 'ALL' && route.path === '/*') continue;
    const key = `${route.method} ${plainPattern(route.path)}`;
    if (!seen.has(key)) seen.set(key, { method: route.method, pattern: route.path, key });
  }
  return [...seen.values()];
}

/**
 * A concrete path for a plain pattern: each `:name` (with its `.json` suffix kept) replaced by the
 * value given for it, as is (the caller encodes it); a trailing `*` by `rest`. Throws for a
 * parameter without a value, so a new parameter name cannot be filled in silently.
 */
export function fillPath(plain: string, values: Readonly<Record<string, string>>, rest = 'anything'): string {
  return plain
    .replaceAll(/:(\w+)/g, (_, name: string) => {
      const found = values[name];
      if (found === undefined) throw new Error(`no value for :${name} in ${plain}`);
      return found;
    })
    .replace(/\*$/, rest);
}

/** The `:name` parameters of a plain pattern, in order. */
export function patternParams(plain: string): string[] {
  return [...plain.matchAll(/:(\w+)/g)].map((match) => match[1] ?? '');
}

/** The plain pattern of a route key (`GET /a/:id.json` → `/a/:id.json`). */
export function pathOfKey(key: string): string {
  return key.slice(key.indexOf(' ') + 1);
}
