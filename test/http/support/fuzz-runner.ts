/**
 * The fuzz tests' request loop: build a (mutated) request, send it, check that the answer is never
 * a 5xx and has the service's error shape, and compare a dump of the whole SQLite database before
 * and after: a rejected request (any 4xx) and any GET must leave it exactly as it was, except for
 * the named, documented allowances the caller passes.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { basic, type HttpReply, type RawRequest } from './client.js';
import {
  type DatabaseDump,
  type DatabaseDumper,
  type DumpAllowance,
  describeChanges,
  diffDumps,
  openDatabaseDumper,
  siteSlice,
  unexpectedChanges,
} from './db-dump.js';
import { API_FAMILIES, type RouteTemplate } from './fuzz-cases.js';
import { pathValues, type SiteWorld, seedSiteWorld } from './fuzz-world.js';
import {
  applyEdits,
  breakJson,
  brokenForm,
  encodeText,
  formPairs,
  jsonText,
  type Mutation,
  mutation as mutationArbitrary,
} from './hostile.js';
import type { HttpFixture } from './http-fixture.js';
import { fillPath, pathOfKey, patternParams } from './route-table.js';

/**
 * Fast-check settings shared by the fuzz files: a fixed seed per property (`FUZZ_SEED` shifts it, to
 * explore), `FUZZ_RUNS_SCALE` scales the runs, and no shrinking: the server keeps state between
 * runs, so a shrunk replay runs against another database and would report a different failure
 * than the first one. The first failing run is reported as it happened (seed, path, values).
 */
export function fuzzParameters(seed: number, numRuns: number): { seed: number; numRuns: number; endOnFailure: true } {
  const override = Number(process.env.FUZZ_SEED);
  const scale = Number(process.env.FUZZ_RUNS_SCALE);
  return {
    seed: Number.isSafeInteger(override) && process.env.FUZZ_SEED !== '' ? override + seed : seed,
    numRuns: Number.isFinite(scale) && scale > 0 ? Math.max(1, Math.round(numRuns * scale)) : numRuns,
    endOnFailure: true,
  };
}

/** A short account of a request for failure messages. */
export function describeRequest(request: RawRequest): string {
  const body =
    request.body === undefined
      ? ''
      : typeof request.body === 'string'
        ? request.body
        : `<${request.body.length} bytes>`;
  const type = request.headers?.['content-type'] ?? '(no content type)';
  return `${request.method ?? 'GET'} ${request.path.slice(0, 300)} [${type}] ${body.slice(0, 400)}`;
}

/** The answer of a request whose dump comparison the caller decides. */
export interface Verdict {
  /** True when the request was refused (the database must not change beyond `allowances`). */
  readonly rejected: boolean;
  readonly allowances?: readonly DumpAllowance[];
}

/** Counters of what a fuzz session sent, for the tests' own sanity checks. */
export interface FuzzStats {
  requests: number;
  rejected: number;
  accepted: number;
  byStatus: Record<number, number>;
}

/** A request loop with a database dump kept between requests. */
export interface FuzzSession {
  readonly stats: FuzzStats;
  /**
   * Sends `request`, asserts no 5xx and nothing logged as unexpected, runs `check` on the reply, and
   * compares the dump: a rejected request or a GET must change nothing but `allowances`.
   */
  send(request: RawRequest, judge: (reply: HttpReply) => Verdict): Promise<HttpReply>;
  close(): void;
}

/**
 * Opens a session on the fixture's SQLite file (the fixture must use `storage: 'sqlite-file'`).
 * With `protectSiteId`, that site's rows must not change after ANY request, accepted or not: the
 * requests of the session act on another site.
 *
 * There are no exclusions by column: the main API writes nothing on a refusal. Its rate limiter
 * is in memory (examples/http/token-bucket.ts) and there is no request log or last-used stamp in
 * the database, so no time field may move. The only writes a refusal makes by design are a
 * refused direct post's call record and nonce claim, passed as row allowances by those tests.
 */
export function openFuzzSession(f: HttpFixture, options: { protectSiteId?: number } = {}): FuzzSession {
  if (f.databaseFile === undefined) throw new Error('the fuzz session needs the sqlite-file storage');
  const dumper: DatabaseDumper = openDatabaseDumper(f.databaseFile);
  let current: DatabaseDump = dumper.dump();
  const stats: FuzzStats = { requests: 0, rejected: 0, accepted: 0, byStatus: {} };
  return {
    stats,
    async send(request, judge) {
      const before = current;
      const reply = await f.raw(request);
      // Taken before any assertion, so that a failing request's changes are not blamed on the next one.
      const after = dumper.dump();
      current = after;
      const label = `${describeRequest(request)}\n→ ${reply.status} ${reply.text.slice(0, 500)}`;
      stats.requests++;
      stats.byStatus[reply.status] = (stats.byStatus[reply.status] ?? 0) + 1;
      expect(reply.status, label).toBeGreaterThanOrEqual(200);
      expect(reply.status, label).toBeLessThan(500);
      expect(f.logged, label).toEqual([]);
      const verdict = judge(reply);
      if (verdict.rejected) stats.rejected++;
      else stats.accepted++;
      if (verdict.rejected || (request.method ?? 'GET') === 'GET') {
        const changes = unexpectedChanges(diffDumps(before, after), verdict.allowances ?? []);
        expect(changes.length, `${label}\nchanged the database:\n${describeChanges(changes)}`).toBe(0);
      }
      if (options.protectSiteId !== undefined) {
        const id = options.protectSiteId;
        const changes = diffDumps(siteSlice(before, id), siteSlice(after, id));
        expect(changes.length, `${label}\nchanged the other site's rows:\n${describeChanges(changes)}`).toBe(0);
      }
      return reply;
    },
    close() {
      dumper.close();
      // FUZZ_STATS=1 prints what each session sent, to see what the generators reach.
      if (process.env.FUZZ_STATS) console.info(`[fuzz] ${JSON.stringify(stats)}`);
    },
  };
}

/** Every table of a Postgres schema: its row count and an MD5 of its rows' text, in one stable order. */
type TableFingerprints = Readonly<Record<string, { readonly rows: number; readonly md5: string }>>;

/**
 * A fuzz session on a fixture with `storage: 'postgres'`: after every refused request (any 4xx)
 * and every GET, each table of the engine's schema must have the rows it had before, compared by
 * count and by an MD5 over the text of all its rows (read through the test's own connection). Any
 * insert, delete or update shows. Sequences are not compared: Postgres advances them even for a
 * transaction it rolls back. The same checks of the answers as {@link openFuzzSession}.
 */
export async function openPostgresFuzzSession(f: HttpFixture): Promise<FuzzSession> {
  const pg = f.postgres;
  if (pg === undefined) throw new Error('the Postgres fuzz session needs the postgres storage');
  const tables = (
    await pg.query<{ name: string }>(
      `select table_name as name from information_schema.tables where table_schema = $1 and table_type = 'BASE TABLE' order by table_name`,
      [pg.schema],
    )
  ).map((row) => row.name);
  if (tables.length < 10) throw new Error(`expected the engine's tables in ${pg.schema}, found ${tables.join(', ')}`);
  const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;
  const sql = tables
    .map(
      (table) =>
        `select '${table.replaceAll("'", "''")}' as name, count(*)::int as rows, ` +
        `md5(coalesce(string_agg(t::text, E'\\n' order by t::text), '')) as md5 from ${ident(pg.schema)}.${ident(table)} t`,
    )
    .join(' union all ');
  const fingerprint = async (): Promise<TableFingerprints> =>
    Object.fromEntries(
      (await pg.query<{ name: string; rows: number; md5: string }>(sql)).map((row) => [
        row.name,
        { rows: row.rows, md5: row.md5 },
      ]),
    );
  let current = await fingerprint();
  const stats: FuzzStats = { requests: 0, rejected: 0, accepted: 0, byStatus: {} };
  return {
    stats,
    async send(request, judge) {
      const before = current;
      const reply = await f.raw(request);
      const after = await fingerprint();
      current = after;
      const label = `${describeRequest(request)}\n→ ${reply.status} ${reply.text.slice(0, 500)}`;
      stats.requests++;
      stats.byStatus[reply.status] = (stats.byStatus[reply.status] ?? 0) + 1;
      expect(reply.status, label).toBeGreaterThanOrEqual(200);
      expect(reply.status, label).toBeLessThan(500);
      expect(f.logged, label).toEqual([]);
      const verdict = judge(reply);
      if (verdict.rejected) stats.rejected++;
      else stats.accepted++;
      if (verdict.rejected || (request.method ?? 'GET') === 'GET') {
        const changed = tables.filter((table) => JSON.stringify(before[table]) !== JSON.stringify(after[table]));
        const detail = changed.map(
          (table) => `${table}: ${JSON.stringify(before[table])} -> ${JSON.stringify(after[table])}`,
        );
        expect(changed, `${label}\nchanged the database:\n${detail.join('\n')}`).toEqual([]);
      }
      return reply;
    },
    close() {
      if (process.env.FUZZ_STATS) console.info(`[fuzz postgres] ${JSON.stringify(stats)}`);
    },
  };
}

/** The content type of the service's JSON answers. */
export const JSON_TYPE = 'application/json; charset=utf-8';

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string' && item !== '');
}

/**
 * Asserts the service's error shape (reference §8.2): 401 is the plain-text access-denied body with
 * a Basic challenge; every other error is JSON with one key, `errors` (a list of messages, a
 * message, a map of attribute to messages, or a list of objects with a message) or `error`.
 */
export function expectServiceError(reply: HttpReply, label: string): void {
  if (reply.status === 401) {
    expect(reply.headers['content-type'], label).toBe('text/plain; charset=utf-8');
    expect(reply.headers['www-authenticate'], label).toBe('Basic realm="Application"');
    expect(reply.text, label).toMatch(/^\S.*\n$/);
    return;
  }
  expect(reply.headers['content-type'], label).toBe(JSON_TYPE);
  const body = reply.json<Record<string, unknown>>();
  expect(typeof body === 'object' && body !== null && !Array.isArray(body), label).toBe(true);
  const keys = Object.keys(body);
  expect(keys.length === 1 && (keys[0] === 'errors' || keys[0] === 'error'), `${label}: keys ${keys}`).toBe(true);
  const value = body.errors ?? body.error;
  const ok =
    (typeof value === 'string' && value !== '') ||
    isStringList(value) ||
    (keys[0] === 'errors' &&
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      Object.keys(value).length > 0 &&
      // A map of field to messages, or to one message (the coupon currency prices' ErrorStringMapResponse).
      Object.values(value).every((v) => isStringList(v) || (typeof v === 'string' && v !== ''))) ||
    (Array.isArray(value) &&
      value.length > 0 &&
      value.every(
        (item) =>
          typeof item === 'object' && item !== null && typeof (item as { message?: unknown }).message === 'string',
      ));
  expect(ok, `${label}: not the service's error shape`).toBe(true);
}

/** Statuses a main-API route may answer (415: a body not typed as JSON). Anything else (a 405, a 5xx...) fails. */
export const API_STATUSES = new Set([200, 201, 400, 403, 404, 409, 413, 415, 422]);

/** Judges a main-API reply: its status and its shape (JSON on success, the error shape otherwise); rejected when 4xx. */
export function judgeApiReply(
  request: RawRequest,
  reply: HttpReply,
  allowances: readonly DumpAllowance[] = [],
): Verdict {
  const label = `${describeRequest(request)}\n→ ${reply.status} ${reply.text.slice(0, 500)}`;
  expect(API_STATUSES.has(reply.status), label).toBe(true);
  if (reply.status >= 400) {
    expectServiceError(reply, label);
    return { rejected: true, allowances };
  }
  expect(reply.headers['content-type'], label).toBe(JSON_TYPE);
  reply.json();
  return { rejected: false };
}

function encodeQuery(query: Readonly<Record<string, unknown>>): string {
  return formPairs(query)
    .map(([k, v]) => `${encodeText(k).replaceAll('%5B', '[').replaceAll('%5D', ']')}=${encodeText(v)}`)
    .join('&');
}

// Node's HTTP parser refuses request heads over 16 KB with a bare 431 before the app sees them, so
// generated query values are cut: the point is the app's handling, not Node's header limit.
const MAX_QUERY_VALUE = 2000;
const MAX_QUERY_LENGTH = 8000;

/** A query edited at its root (a scalar put in its place) as an object again: `{ value: ... }`. */
function asQueryObject(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : { value };
}

function capQuery(value: unknown): unknown {
  if (typeof value === 'string') return value.slice(0, MAX_QUERY_VALUE);
  if (Array.isArray(value)) return value.map(capQuery);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, capQuery(v)]));
  }
  return value;
}

/** The first key of a wrapped body and its object, if the body has that shape. */
function wrapperOf(body: unknown): { key: string; inner: unknown } | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const [key] = Object.keys(body);
  return key === undefined ? undefined : { key, inner: (body as Record<string, unknown>)[key] };
}

/**
 * A request of route `key` for the world's site: the template with `mutation` applied, with the
 * site's Host and API key (override `key` or `host` to send another site's).
 */
export function apiRequest(
  f: HttpFixture,
  w: SiteWorld,
  routeKey: string,
  template: RouteTemplate,
  mutation: Mutation,
  auth: { apiKey?: string; host?: string } = {},
): RawRequest {
  const method = routeKey.slice(0, routeKey.indexOf(' '));
  const plain = pathOfKey(routeKey);
  let params = pathValues(w, plain, template.params);
  let query: unknown = template.query;
  let rawQuery = '';
  let body: unknown = template.body;
  let text: string | Buffer | undefined;
  let contentType: string | null = 'application/json';
  switch (mutation.kind) {
    case 'valid':
      break;
    case 'path': {
      const names = patternParams(plain);
      const name = names[mutation.pick % Math.max(1, names.length)];
      if (name === undefined) rawQuery = `x=${mutation.segment}`;
      else params = { ...params, [name]: mutation.segment };
      break;
    }
    case 'fields': {
      // A route that reads a query and no body gets its query fields edited instead.
      if (body === undefined && query !== undefined) {
        query = { ...asQueryObject(applyEdits(query, mutation.edits)), ...mutation.extra };
        break;
      }
      body = applyEdits(body ?? {}, mutation.edits);
      const wrapped = wrapperOf(body);
      if (
        wrapped !== undefined &&
        wrapped.inner !== null &&
        typeof wrapped.inner === 'object' &&
        !Array.isArray(wrapped.inner)
      ) {
        body = { ...(body as object), [wrapped.key]: { ...(wrapped.inner as object), ...mutation.extra } };
      }
      if (body !== null && typeof body === 'object' && !Array.isArray(body)) body = { ...body, ...mutation.topExtra };
      break;
    }
    case 'wrapper': {
      const wrapped = wrapperOf(body ?? {});
      const key = wrapped?.key ?? 'subscription';
      const inner = wrapped?.inner ?? {};
      if (mutation.shape === 'missing') body = {};
      else if (mutation.shape === 'unwrapped')
        body = typeof inner === 'object' && inner !== null ? inner : { value: inner };
      else if (mutation.shape === 'scalar') body = { [key]: mutation.value };
      else if (mutation.shape === 'array') body = { [key]: [inner, mutation.value] };
      else if (mutation.shape === 'renamed') body = { [`${key}s`]: inner, data: inner };
      else if (mutation.shape === 'top-scalar') body = [mutation.value];
      else text = '';
      break;
    }
    case 'json-text':
      text = breakJson(jsonText(body ?? {}), mutation.broken, mutation.at, mutation.garbage);
      break;
    case 'form':
      text = brokenForm(formPairs(body ?? {}), mutation.breakage, mutation.at);
      contentType = mutation.contentType;
      break;
    case 'content-type':
      text = jsonText(body ?? {});
      contentType = mutation.contentType;
      break;
    case 'query':
      query = asQueryObject(applyEdits(query ?? {}, mutation.edits));
      rawQuery = mutation.raw;
      break;
  }
  if (text === undefined && body !== undefined) text = jsonText(body);
  const search = [query === undefined ? '' : encodeQuery(capQuery(query) as Record<string, unknown>), rawQuery]
    .filter((part) => part !== '')
    .join('&')
    .slice(0, MAX_QUERY_LENGTH);
  const path = `${fillPath(plain, params)}${search === '' ? '' : `?${search}`}`;
  const headers: Record<string, string> = {
    host: auth.host ?? `${w.site}.localhost:${f.port}`,
    accept: 'application/json',
    authorization: basic(auth.apiKey ?? w.apiKey),
  };
  if (text !== undefined && contentType !== null) headers['content-type'] = contentType;
  return { method, path, headers, ...(text === undefined ? {} : { body: text }) };
}

/** A webhook `fetch` for the engine that never leaves the process (endpoint test messages go nowhere). */
export const noNetworkFetch = (async () => new Response('ok', { status: 200 })) as typeof fetch;

/**
 * The fuzz property of one main-API route family: both sites seeded, then `numRuns` runs, each
 * sending one mutated request (of `options.mutations`, default every kind) to every route of the
 * family in turn (as acme), every one checked by {@link FuzzSession.send}. Returns the session's
 * counters. The database is compared by the SQLite dump, or on Postgres by
 * {@link openPostgresFuzzSession}.
 */
export async function fuzzApiFamily(
  f: HttpFixture,
  family: string,
  seed: number,
  numRuns: number,
  options: { mutations?: fc.Arbitrary<Mutation> } = {},
): Promise<FuzzStats> {
  const routes = Object.entries(API_FAMILIES[family] ?? {});
  if (routes.length === 0) throw new Error(`no route family ${family}`);
  const w = await seedSiteWorld(f, 'acme');
  const other = await seedSiteWorld(f, 'globex');
  // On Postgres: every table by row count and content; on SQLite: the whole dump, the other site's rows too.
  const session =
    f.postgres === undefined ? openFuzzSession(f, { protectSiteId: other.siteId }) : await openPostgresFuzzSession(f);
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.array(options.mutations ?? mutationArbitrary, { minLength: routes.length, maxLength: routes.length }),
        async (mutations) => {
          for (const [i, [key, build]] of routes.entries()) {
            const request = apiRequest(f, w, key, build(w), mutations[i] ?? { kind: 'valid' });
            await session.send(request, (reply) => judgeApiReply(request, reply));
          }
        },
      ),
      fuzzParameters(seed, numRuns),
    );
  } finally {
    session.close();
  }
  return session.stats;
}
