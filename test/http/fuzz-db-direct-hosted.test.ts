/**
 * Fuzz, part 3 (issue 11, part 5): the direct-post interface (forged and broken signatures, broken
 * secure data, broken form and JSON encodings, hostile signup and card fields) and the hosted pages
 * (card update page, billing portal and its actions, forged tokens and links). Never a 5xx, always
 * the interface's own answer shape (a signed redirect or the call's JSON for direct posts, an HTML
 * page for hosted pages), and the SQLite dump unchanged after every refused request and every GET,
 * except for what a refused direct post records by design (named below). Also the documents that
 * are not JSON (invoice and credit note PDFs, an invoice's HTML page, the portal's invoice
 * download), the public API reference, and the invoice and events route families of the main API
 * (run here, beside the documents). Also checks that every route of the app has a fuzz case.
 */
import { createHash } from 'node:crypto';
import { createPortalLink } from 'billing-engine';
import { directRequestSignature, encodeSecureData, hostedPageToken } from 'billing-engine/chargify';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readFlash } from '../../examples/http/hosted/portal-flash.js';
import { basic, type HttpReply, type RawRequest } from './support/client.js';
import type { DumpAllowance } from './support/db-dump.js';
import { fuzzedRouteKeys } from './support/fuzz-cases.js';
import {
  describeRequest,
  expectServiceError,
  type FuzzSession,
  fuzzApiFamily,
  fuzzParameters,
  JSON_TYPE,
  noNetworkFetch,
  openFuzzSession,
  type Verdict,
} from './support/fuzz-runner.js';
import { type SiteWorld, seedSiteWorld } from './support/fuzz-world.js';
import {
  applyEdits,
  brokenForm,
  encodeText,
  type FieldEdit,
  FORM_BREAKS,
  formPairs,
  HOSTILE_SEGMENTS,
  hostileValue,
  NASTY_SCALARS,
} from './support/hostile.js';
import { type HttpFixture, START, useHttpFixture } from './support/http-fixture.js';
import { appRoutes } from './support/route-table.js';

const RETURN = 'https://merchant.example.com/return';
const FORM_TYPE = 'application/x-www-form-urlencoded';
const HTML_TYPE = 'text/html; charset=utf-8';

/** `usual` three times in five, one of `others` otherwise: most requests get past the first check. */
function often<T>(usual: T, ...others: T[]): fc.Arbitrary<T> {
  return fc.oneof({ arbitrary: fc.constant(usual), weight: 3 }, { arbitrary: fc.constantFrom(...others), weight: 2 });
}

const someFieldEdits = fc.array(
  fc.record({ pick: fc.nat(), op: fc.constantFrom<'set' | 'delete'>('set', 'set', 'delete'), value: hostileValue }),
  { minLength: 1, maxLength: 4 },
);
/** Half the time no edit at all, so that the other choices of a case are what is tested. */
const fieldEdits = fc.oneof(fc.constant<FieldEdit[]>([]), someFieldEdits);
const text = fc.oneof(
  fc.constantFrom(...NASTY_SCALARS.filter((v): v is string => typeof v === 'string')),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
);

// ---------------------------------------------------------------------------------------------
// What a refused direct post may write, by design (docs/decisions.md, spec §4 flow step 2 and §5
// rule 5, DirectPostService): nothing else.

/**
 * Every post whose `api_id` names a site is recorded as a call, failures included, so the merchant
 * can read what went wrong (spec §4 direct post flow, step 5). Only the one call the answer names,
 * and only as a failure.
 */
function callRecord(callId: string): DumpAllowance {
  return {
    name: 'direct call record',
    why: 'a refused direct post is recorded as a failed call by design (spec §4 flow, docs/decisions.md)',
    table: 'direct_calls',
    change: 'insert',
    row: (row) => row.id === callId && row.success === 0,
  };
}

/**
 * A signed post that passed its checks claims its signed input (and, when it sent a timestamp and a
 * nonce, `(api_id, timestamp, nonce)`) in its own committed transaction before any work, so that a
 * replay, shifted or not, is refused whatever the first outcome (spec §5 rule 5; DirectPostService
 * `#admit`). This is a claim row written by a refused request: deliberate, and reported as such.
 */
function nonceClaim(apiIds: readonly string[]): DumpAllowance {
  return {
    name: 'direct post claim',
    why: 'spec §5 rule 5: a signed post is spent whatever its outcome',
    table: 'direct_post_claims',
    change: 'insert',
    row: (row) => row.nonce_key === null || apiIds.some((id) => String(row.nonce_key).startsWith(`${id}|`)),
  };
}

/** The direct-post answer: a signed redirect, or the call's JSON, or a plain error before any call. */
function judgeDirect(request: RawRequest, reply: HttpReply, apiIds: readonly string[]): Verdict {
  const label = `${describeRequest(request)}\n→ ${reply.status} ${reply.text.slice(0, 400)}`;
  expect([200, 303, 400, 401, 404, 409, 413, 415, 422], label).toContain(reply.status);
  if (reply.status === 303) {
    const location = new URL(String(reply.headers.location));
    const callId = location.searchParams.get('call_id') ?? '';
    expect(callId, label).toMatch(/^[0-9a-f]{40}$/);
    expect(location.searchParams.get('signature'), label).toMatch(/^[0-9a-f]{40}$/);
    const resultCode = location.searchParams.get('result_code');
    expect(resultCode, label).toMatch(/^\d{4}$/);
    return resultCode === '2000'
      ? { rejected: false }
      : { rejected: true, allowances: [callRecord(callId), nonceClaim(apiIds)] };
  }
  const callId = reply.headers['x-direct-call-id'];
  if (typeof callId === 'string') {
    expect(reply.headers['content-type'], label).toBe(JSON_TYPE);
    const body = reply.json<{ result: { status_code: string; result_code: string; errors: unknown[] } }>();
    expect(body.result.status_code, label).toBe(String(reply.status));
    if (body.result.result_code === '2000') return { rejected: false };
    expect(body.result.errors.length, label).toBeGreaterThan(0);
    for (const error of body.result.errors) {
      expect(error, label).toMatchObject({ attribute: expect.any(String), message: expect.any(String) });
    }
    return { rejected: true, allowances: [callRecord(callId), nonceClaim(apiIds)] };
  }
  // Refused before any call: an unknown api_id (401), malformed JSON (400), too large (413), wrong type (415).
  expectServiceError(reply, label);
  return { rejected: true };
}

/** The key the fixture signs portal flash cookies with, so that a test can read them. */
const FLASH_SECRET = 'fuzz-flash-secret-of-at-least-32-bytes';

/** A hosted page's answer: an HTML page (or a portal action's 303); refused when 4xx or an error flash. */
function judgeHosted(f: HttpFixture, request: RawRequest, reply: HttpReply): Verdict {
  const label = `${describeRequest(request)}\n→ ${reply.status} ${reply.text.slice(0, 300)}`;
  expect([200, 303, 403, 404, 410, 413, 415, 422], label).toContain(reply.status);
  if (reply.status === 303) {
    const cookies = reply.headers['set-cookie'] ?? [];
    const value = cookies.map((c) => /^portal_flash=([^;]*)/.exec(c)?.[1]).find((v) => v !== undefined);
    const flash = readFlash(value, String(reply.headers.location), FLASH_SECRET, f.clock.now());
    expect(flash, label).toBeDefined();
    return { rejected: flash?.kind === 'error' };
  }
  expect(reply.headers['content-type'], label).toBe(HTML_TYPE);
  expect(reply.text, label).toMatch(/^<!doctype html>/i);
  return { rejected: reply.status >= 400 };
}

// ---------------------------------------------------------------------------------------------
// Direct post generators.

type Signing = 'valid' | 'upper' | 'forged' | 'other-secret' | 'truncated' | 'missing' | 'array' | 'huge' | 'unicode';
type Who = 'own' | 'other' | 'unknown' | 'empty' | 'missing' | 'array' | 'huge';

interface SecureCase {
  readonly who: Who;
  readonly signing: Signing;
  readonly timestamp: string | null;
  readonly nonce: string | null;
  readonly data: 'valid' | 'none' | 'redirect-js' | 'redirect-relative' | 'broken' | 'huge' | 'hostile-handle';
  readonly breakage: string;
  readonly handle: unknown;
}

const secureCase: fc.Arbitrary<SecureCase> = fc.record({
  who: often<Who>('own', 'other', 'unknown', 'empty', 'missing', 'array', 'huge'),
  signing: often<Signing>(
    'valid',
    'upper',
    'forged',
    'other-secret',
    'truncated',
    'missing',
    'array',
    'huge',
    'unicode',
  ),
  timestamp: often<string | null>('now', null, '', '1.5', '-1', '1e9', 'abc', '9'.repeat(30), '0', ' 1 ', '١٢٣'),
  nonce: often<string | null>('fresh', null, '', 'repeat', 'n'.repeat(41), 'é', '\u0000', 'x y'),
  data: often<SecureCase['data']>(
    'valid',
    'none',
    'redirect-js',
    'redirect-relative',
    'broken',
    'huge',
    'hostile-handle',
  ),
  breakage: fc.constantFrom(...FORM_BREAKS),
  handle: hostileValue,
});

let nonceCounter = 0;

/** The `secure[...]` pairs of a case, signed as the case says, plus the secure data it signed. */
function securePairs(
  f: HttpFixture,
  own: SiteWorld,
  other: SiteWorld,
  c: SecureCase,
  signed: Record<string, unknown>,
): [string, string][] {
  const creds = c.who === 'other' ? other.direct : own.direct;
  const apiId =
    c.who === 'unknown'
      ? 'no-such-api-id'
      : c.who === 'empty'
        ? ''
        : c.who === 'huge'
          ? 'a'.repeat(20_000)
          : creds.apiId;
  const timestamp = c.timestamp === 'now' ? String(Math.floor(f.clock.now().getTime() / 1000)) : c.timestamp;
  const nonce =
    c.nonce === 'fresh'
      ? createHash('sha1').update(`fuzz-${nonceCounter++}`).digest('hex')
      : c.nonce === 'repeat'
        ? 'fuzz-repeated-nonce'
        : c.nonce;
  let data: string | undefined;
  if (c.data === 'valid') data = encodeSecureData({ redirect_uri: RETURN, ...signed });
  else if (c.data === 'redirect-js') data = encodeSecureData({ redirect_uri: 'javascript:alert(1)', ...signed });
  else if (c.data === 'redirect-relative') data = encodeSecureData({ redirect_uri: '/relative', ...signed });
  else if (c.data === 'broken') data = `${encodeSecureData({ redirect_uri: RETURN, ...signed })}&${c.breakage}`;
  else if (c.data === 'huge') data = encodeSecureData({ redirect_uri: RETURN, blob: 'z'.repeat(100_000), ...signed });
  else if (c.data === 'hostile-handle') {
    data = encodeSecureData({
      redirect_uri: RETURN,
      ...signed,
      signup: { product: { handle: String(JSON.stringify(c.handle)) } },
    });
  }
  const secret = c.signing === 'other-secret' ? other.direct.apiSecret : creds.apiSecret;
  const good = directRequestSignature(
    { apiId, timestamp: timestamp ?? undefined, nonce: nonce ?? undefined, data },
    secret,
  );
  const signature: Record<Signing, string | null> = {
    valid: good,
    upper: good.toUpperCase(),
    forged: createHash('sha1').update(`forged${good}`).digest('hex'),
    'other-secret': good,
    truncated: good.slice(0, 39),
    missing: null,
    array: good,
    huge: good + 'f'.repeat(50_000),
    unicode: `${good.slice(0, 38)}é`,
  };
  const pairs: [string, string][] = [];
  if (c.who === 'array') pairs.push(['secure[api_id][]', creds.apiId], ['secure[api_id][]', 'x']);
  else if (c.who !== 'missing') pairs.push(['secure[api_id]', apiId]);
  if (timestamp !== null) pairs.push(['secure[timestamp]', timestamp]);
  if (nonce !== null) pairs.push(['secure[nonce]', nonce]);
  if (data !== undefined) pairs.push(['secure[data]', data]);
  const sig = signature[c.signing];
  if (c.signing === 'array') pairs.push(['secure[signature][]', good], ['secure[signature][]', good]);
  else if (sig !== null) pairs.push(['secure[signature]', sig]);
  return pairs;
}

interface BodyCase {
  readonly encoding:
    | 'form'
    | 'form-broken'
    | 'json'
    | 'json-wrong-password'
    | 'json-no-auth'
    | 'json-broken'
    | 'other-type'
    | 'no-type'
    | 'huge';
  readonly breakage: string;
  readonly at: number;
  readonly contentType: string;
}

const bodyCase: fc.Arbitrary<BodyCase> = fc.record({
  encoding: often<BodyCase['encoding']>(
    'form',
    'form-broken',
    'json',
    'json-wrong-password',
    'json-no-auth',
    'json-broken',
    'other-type',
    'no-type',
    'huge',
  ),
  breakage: fc.constantFrom(...FORM_BREAKS),
  at: fc.nat(),
  contentType: fc.constantFrom('text/plain', 'multipart/form-data; boundary=x', 'application/xml', 'x/y;;;'),
});

function directHeaders(f: HttpFixture, type: string | null, authorization?: string): Record<string, string> {
  return {
    // The direct host is one for all sites: the Host names no site.
    host: `api.localhost:${f.port}`,
    accept: 'application/json',
    ...(type === null ? {} : { 'content-type': type }),
    ...(authorization === undefined ? {} : { authorization }),
  };
}

/** A direct post request of `fields` (the non-secure params) and the secure pairs, encoded as the case says. */
function directPost(
  f: HttpFixture,
  path: string,
  own: SiteWorld,
  secure: [string, string][],
  fields: Record<string, unknown>,
  b: BodyCase,
): RawRequest {
  const pairs = [...secure, ...formPairs(fields)];
  const form = () => pairs.map(([k, v]) => `${encodeText(k)}=${encodeText(v)}`).join('&');
  switch (b.encoding) {
    case 'form':
      return { method: 'POST', path, headers: directHeaders(f, FORM_TYPE), body: form() };
    case 'form-broken':
      return { method: 'POST', path, headers: directHeaders(f, FORM_TYPE), body: brokenForm(pairs, b.breakage, b.at) };
    case 'huge':
      return {
        method: 'POST',
        path,
        headers: directHeaders(f, FORM_TYPE),
        body: `${form()}&pad=${'p'.repeat(1_100_000)}`,
      };
    case 'no-type':
      return { method: 'POST', path, headers: directHeaders(f, null), body: form() };
    case 'other-type':
      return { method: 'POST', path, headers: directHeaders(f, b.contentType), body: form() };
    case 'json':
    case 'json-wrong-password':
    case 'json-no-auth':
    case 'json-broken': {
      const auth =
        b.encoding === 'json-no-auth'
          ? undefined
          : basic(own.direct.apiId, b.encoding === 'json-wrong-password' ? 'wrong' : own.direct.apiPassword);
      const text = JSON.stringify(fields);
      return {
        method: 'POST',
        path,
        headers: directHeaders(f, 'application/json', auth),
        body: b.encoding === 'json-broken' ? text.slice(0, 1 + (b.at % text.length)) : text,
      };
    }
  }
}

function signupFields(w: SiteWorld, edits: readonly FieldEdit[]): Record<string, unknown> {
  const signup = {
    product: { handle: w.productHandle },
    customer: { first_name: 'Direct', last_name: 'Fuzz', email: `direct-${w.marker}@example.com` },
    payment_profile: {
      first_name: 'Direct',
      last_name: 'Fuzz',
      card_number: '4111111111111111',
      expiration_month: '12',
      expiration_year: '2030',
      cvv: '123',
    },
  };
  return { signup: applyEdits(signup, edits) };
}

function cardUpdateFields(edits: readonly FieldEdit[]): Record<string, unknown> {
  const profile = {
    first_name: 'New',
    last_name: 'Card',
    card_number: '4111111111111111',
    expiration_month: '11',
    expiration_year: '2031',
    billing_zip: '10001',
  };
  return { payment_profile: applyEdits(profile, edits) };
}

// ---------------------------------------------------------------------------------------------
// Hosted page generators.

type HostChoice = 'own' | 'other' | 'unknown';

function pageHost(f: HttpFixture, own: SiteWorld, other: SiteWorld, host: HostChoice): string {
  const name = host === 'own' ? own.site : host === 'other' ? other.site : 'nosuchsite';
  return `${name}.localhost:${f.port}`;
}

function pageRequest(
  host: string,
  method: string,
  path: string,
  form?: string,
  type: string | null = FORM_TYPE,
): RawRequest {
  const headers: Record<string, string> = { host, accept: 'text/html' };
  if (form !== undefined && type !== null) headers['content-type'] = type;
  return { method, path, headers, ...(form === undefined ? {} : { body: form }) };
}

type TokenChoice = 'valid' | 'upper' | 'long' | 'short' | 'forged' | 'other-key' | 'hostile';
type IdChoice = 'own' | 'pretty' | 'other-site' | 'hostile';

function cardUpdatePath(own: SiteWorld, other: SiteWorld, id: IdChoice, token: TokenChoice, segment: string): string {
  const subscriptionId =
    id === 'other-site' ? String(other.subscriptionId) : id === 'hostile' ? segment : String(own.subscriptionId);
  const numeric = id === 'other-site' ? other.subscriptionId : own.subscriptionId;
  const good = hostedPageToken('update_payment', numeric, own.sharedKey);
  const tokens: Record<TokenChoice, string> = {
    valid: good,
    upper: good.toUpperCase(),
    long: `${good}abcdef`,
    short: good.slice(0, 9),
    forged: `${good.slice(0, 9)}${good.endsWith('0') ? '1' : '0'}`,
    'other-key': hostedPageToken('update_payment', numeric, other.sharedKey),
    hostile: segment,
  };
  const idSegment = id === 'pretty' ? `${subscriptionId}-john-doe` : subscriptionId;
  return `/update_payment/${idSegment}/${tokens[token]}`;
}

type LinkChoice = 'valid' | 'forged' | 'expired' | 'lone-customer' | 'other-site' | 'hostile';

function portalBase(f: HttpFixture, own: SiteWorld, other: SiteWorld, link: LinkChoice, segment: string): string {
  switch (link) {
    case 'valid':
      return own.portalPath;
    case 'forged': {
      const parts = own.portalPath.split('/');
      const signature = parts[4] ?? '';
      parts[4] = `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`;
      return parts.join('/');
    }
    case 'expired':
      return createPortalLink({
        customerId: own.customerId,
        sharedKey: own.sharedKey,
        now: new Date(Date.parse(START) - 200 * 86_400_000),
      }).path;
    case 'lone-customer':
      return createPortalLink({ customerId: own.loneCustomerId, sharedKey: own.sharedKey, now: f.clock.now() }).path;
    case 'other-site':
      return other.portalPath;
    case 'hostile':
      return `/portal/${segment}/1/${segment}`;
  }
}

const PORTAL_ACTIONS = ['change_plan', 'cancel', 'undo_cancel', 'update_card', 'allocate'] as const;

function portalForm(
  own: SiteWorld,
  other: SiteWorld,
  action: string,
  target: 'own' | 'other-site' | 'hostile',
  value: unknown,
) {
  const subscriptionId =
    target === 'own'
      ? String(own.subscriptionId)
      : target === 'other-site'
        ? String(other.subscriptionId)
        : String(JSON.stringify(value));
  const base: Record<string, string> = { subscription_id: subscriptionId };
  if (action === 'change_plan') base.product_id = String(own.otherProductId);
  if (action === 'cancel') base.reason = 'Too expensive';
  if (action === 'update_card') {
    Object.assign(base, {
      first_name: 'Portal',
      last_name: 'Card',
      full_number: '4111111111111111',
      expiration_month: '10',
      expiration_year: '2032',
      cvv: '123',
    });
  }
  if (action === 'allocate') {
    base[`quantity[${own.seatsId}]`] = '4';
    base[`quantity[${own.supportId}]`] = '1';
  }
  return base;
}

/** Puts hostile values into some of a flat form's fields. */
function editForm(form: Record<string, string>, edits: readonly FieldEdit[]): [string, string][] {
  const entries = Object.entries(form);
  for (const edit of edits) {
    if (entries.length === 0) break;
    const i = edit.pick % entries.length;
    const [key] = entries[i] ?? ['x'];
    if (edit.op === 'delete') entries.splice(i, 1);
    else entries[i] = [key, typeof edit.value === 'string' ? edit.value : String(JSON.stringify(edit.value))];
  }
  return entries;
}

/**
 * Both sites seeded, and a session. `protectOther`: the other site's rows may not change at all
 * (the hosted pages and call reads never act on it); direct posts may be signed with its
 * credentials, which records calls there, so they leave it out.
 */
async function worlds(
  f: HttpFixture,
  protectOther = true,
): Promise<{ own: SiteWorld; other: SiteWorld; session: FuzzSession }> {
  const own = await seedSiteWorld(f, 'acme');
  const other = await seedSiteWorld(f, 'globex');
  return { own, other, session: openFuzzSession(f, protectOther ? { protectSiteId: other.siteId } : {}) };
}

describe('fuzz: direct post and hosted pages never 5xx and change nothing when refused', () => {
  const http = useHttpFixture({
    rateLimit: false,
    storage: 'sqlite-file',
    webhooks: { fetch: noNetworkFetch },
    hosted: { flashSecret: FLASH_SECRET },
  });

  it('every route of the app has a fuzz case (direct, hosted and main API), and no case names a missing route', () => {
    const app = appRoutes(http().app).map((route) => route.key);
    expect(app.length).toBeGreaterThan(100);
    expect([...fuzzedRouteKeys()].sort()).toEqual([...app].sort());
  });

  it('POST /api/v2/signups and /api/v2/signups.json: forged signatures, broken secure data, forms and JSON', async () => {
    const f = http();
    const { own, other, session } = await worlds(f, false);
    try {
      await fc.assert(
        fc.asyncProperty(
          secureCase,
          bodyCase,
          fieldEdits,
          fc.constantFrom('/api/v2/signups', '/api/v2/signups.json'),
          async (c, b, edits, path) => {
            const secure = securePairs(f, own, other, c, { signup: { product: { handle: own.productHandle } } });
            const request = directPost(f, path, own, secure, signupFields(own, edits), b);
            await session.send(request, (reply) => judgeDirect(request, reply, [own.direct.apiId, other.direct.apiId]));
          },
        ),
        fuzzParameters(5301, 150),
      );
    } finally {
      session.close();
    }
    expect(session.stats.rejected, JSON.stringify(session.stats)).toBeGreaterThan(session.stats.requests / 2);
  }, 120_000);

  it('POST /api/v2/subscriptions/{id}/card_update: forged signatures, wrong and hostile ids, missing nonces', async () => {
    const f = http();
    const { own, other, session } = await worlds(f, false);
    try {
      await fc.assert(
        fc.asyncProperty(
          secureCase,
          bodyCase,
          fieldEdits,
          often<IdChoice>('own', 'other-site', 'hostile'),
          often('own', 'other-site', 'missing', 'hostile'),
          fc.constantFrom(...HOSTILE_SEGMENTS),
          async (c, b, edits, pathId, signedId, segment) => {
            const id =
              pathId === 'own'
                ? String(own.subscriptionId)
                : pathId === 'other-site'
                  ? String(other.subscriptionId)
                  : segment;
            const signed =
              signedId === 'own'
                ? { subscription_id: String(own.subscriptionId) }
                : signedId === 'other-site'
                  ? { subscription_id: String(other.subscriptionId) }
                  : signedId === 'hostile'
                    ? { subscription_id: segment }
                    : {};
            const secure = securePairs(f, own, other, c, signed);
            const request = directPost(
              f,
              `/api/v2/subscriptions/${id}/card_update`,
              own,
              secure,
              cardUpdateFields(edits),
              b,
            );
            await session.send(request, (reply) => judgeDirect(request, reply, [own.direct.apiId, other.direct.apiId]));
          },
        ),
        fuzzParameters(5302, 120),
      );
    } finally {
      session.close();
    }
    expect(session.stats.rejected, JSON.stringify(session.stats)).toBeGreaterThan(session.stats.requests / 2);
  }, 120_000);

  it('GET /api/v2/calls/{id}: wrong credentials, other sites’ calls and hostile ids read nothing and write nothing', async () => {
    const f = http();
    const { own, other, session } = await worlds(f);
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('own', 'other-site', 'hostile', 'own-json', 'own-upper'),
          fc.constantFrom('right', 'wrong-password', 'other-site', 'none', 'malformed', 'api-key'),
          fc.constantFrom(...HOSTILE_SEGMENTS),
          async (which, auth, segment) => {
            const id =
              which === 'other-site'
                ? String(other.callId)
                : which === 'hostile'
                  ? segment
                  : which === 'own-json'
                    ? `${own.callId}.json`
                    : which === 'own-upper'
                      ? String(own.callId).toUpperCase()
                      : String(own.callId);
            const authorization: Record<string, string | undefined> = {
              right: basic(own.direct.apiId, own.direct.apiPassword),
              'wrong-password': basic(own.direct.apiId, 'nope'),
              'other-site': basic(other.direct.apiId, other.direct.apiPassword),
              none: undefined,
              malformed: 'Basic %%%',
              'api-key': basic(own.apiKey),
            };
            const request: RawRequest = {
              method: 'GET',
              path: `/api/v2/calls/${id}`,
              headers: directHeaders(f, null, authorization[auth]),
            };
            await session.send(request, (reply) => {
              const label = `${describeRequest(request)}\n→ ${reply.status} ${reply.text.slice(0, 300)}`;
              expect([200, 401, 404], label).toContain(reply.status);
              const label2 = `${label} (credentials: ${auth}, call: ${which})`;
              if (reply.status === 200) {
                // Only a call of the credentials' own site, with the right password.
                const ownCall = auth === 'right' && which !== 'other-site' && which !== 'hostile';
                const otherCall = auth === 'other-site' && which === 'other-site';
                expect(ownCall || otherCall, label2).toBe(true);
                expect(reply.json<{ call: { id: string } }>().call.id, label2).toBe(
                  String(ownCall ? own.callId : other.callId),
                );
                return { rejected: false };
              }
              expectServiceError(reply, label2);
              // A refusal may echo the id it was sent, never the other site's call (its api_id is in every call).
              expect(reply.text, label2).not.toContain(other.direct.apiId);
              return { rejected: true };
            });
          },
        ),
        fuzzParameters(5303, 60),
      );
    } finally {
      session.close();
    }
  }, 120_000);

  it('the card update page: forged and foreign tokens, pretty and hostile ids, hostile card forms', async () => {
    const f = http();
    const { own, other, session } = await worlds(f);
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('GET', 'POST', 'POST', 'POST'),
          often<IdChoice>('own', 'pretty', 'other-site', 'hostile'),
          often<TokenChoice>('valid', 'upper', 'long', 'short', 'forged', 'other-key', 'hostile'),
          often<HostChoice>('own', 'other', 'unknown'),
          fc.constantFrom(...HOSTILE_SEGMENTS),
          fieldEdits,
          often<string | null>(FORM_TYPE, 'application/json', 'text/plain', null),
          often('plain', 'broken', 'huge'),
          fc.constantFrom(...FORM_BREAKS),
          async (method, id, token, host, segment, edits, type, encoding, breakage) => {
            const path = cardUpdatePath(own, other, id, token, segment);
            const fields = editForm(
              {
                first_name: 'Page',
                last_name: 'Card',
                full_number: '4111111111111111',
                expiration_month: '09',
                expiration_year: '2033',
                cvv: '123',
                billing_zip: '10001',
              },
              edits,
            );
            const form =
              encoding === 'broken'
                ? brokenForm(fields, breakage, edits.length)
                : encoding === 'huge'
                  ? `${new URLSearchParams(fields)}&pad=${'p'.repeat(70_000)}`
                  : new URLSearchParams(fields).toString();
            const request = pageRequest(
              pageHost(f, own, other, host),
              method,
              path,
              method === 'POST' ? form : undefined,
              type,
            );
            await session.send(request, (reply) => judgeHosted(f, request, reply));
          },
        ),
        fuzzParameters(5304, 100),
      );
    } finally {
      session.close();
    }
    expect(session.stats.rejected, JSON.stringify(session.stats)).toBeGreaterThan(session.stats.requests / 2);
  }, 120_000);

  it('the billing portal and its actions: forged, expired and foreign links, other subscriptions, hostile forms', async () => {
    const f = http();
    const { own, other, session } = await worlds(f);
    try {
      await fc.assert(
        fc.asyncProperty(
          often<LinkChoice>('valid', 'forged', 'expired', 'lone-customer', 'other-site', 'hostile'),
          fc.oneof(
            { arbitrary: fc.constantFrom<string | null>(null, ...PORTAL_ACTIONS), weight: 4 },
            { arbitrary: text, weight: 1 },
          ),
          often<'own' | 'other-site' | 'hostile'>('own', 'other-site', 'hostile'),
          often<HostChoice>('own', 'other', 'unknown'),
          fc.constantFrom(...HOSTILE_SEGMENTS),
          fieldEdits,
          hostileValue,
          often<string | null>(FORM_TYPE, 'application/json', null),
          async (link, action, target, host, segment, edits, value, type) => {
            const base = portalBase(f, own, other, link, segment);
            const hostName = pageHost(f, own, other, host);
            let request: RawRequest;
            if (action === null) {
              request = pageRequest(hostName, 'GET', base);
            } else {
              const name = typeof action === 'string' ? encodeText(action) || 'x' : 'x';
              const form = editForm(portalForm(own, other, action, target, value), edits);
              request = pageRequest(hostName, 'POST', `${base}/${name}`, new URLSearchParams(form).toString(), type);
            }
            await session.send(request, (reply) => judgeHosted(f, request, reply));
          },
        ),
        fuzzParameters(5305, 150),
      );
    } finally {
      session.close();
    }
    expect(session.stats.rejected, JSON.stringify(session.stats)).toBeGreaterThan(session.stats.requests / 3);
  }, 120_000);

  it('anything else under /update_payment/ and /portal/ is a 404 page that changes nothing', async () => {
    const f = http();
    const { own, other, session } = await worlds(f);
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
          fc.constantFrom('/update_payment/', '/portal/'),
          fc.array(fc.constantFrom(...HOSTILE_SEGMENTS, 'x', String(own.subscriptionId), String(own.customerId)), {
            minLength: 0,
            maxLength: 5,
          }),
          often<HostChoice>('own', 'other', 'unknown'),
          async (method, prefix, segments, host) => {
            const path = `${prefix}${segments.join('/')}`;
            const request = pageRequest(
              pageHost(f, own, other, host),
              method,
              path,
              method === 'GET' ? undefined : 'a=1',
            );
            await session.send(request, (reply) => {
              const verdict = judgeHosted(f, request, reply);
              // Only a well-formed page URL can be anything but the 404 page (these have no valid token or link).
              expect(reply.status, describeRequest(request)).toBe(404);
              return verdict;
            });
          },
        ),
        fuzzParameters(5306, 60),
      );
    } finally {
      session.close();
    }
  }, 120_000);

  it('GET /: the public how-to answers any host, key and query with its JSON, never 5xx, and changes nothing', async () => {
    const f = http();
    const { own, other, session } = await worlds(f);
    try {
      await fc.assert(
        fc.asyncProperty(
          often<HostChoice>('own', 'other', 'unknown'),
          fc.constantFrom(undefined, own.apiKey, other.apiKey, 'wrong'),
          fc.array(fc.constantFrom(...HOSTILE_SEGMENTS, 'a=1', 'x'), { maxLength: 3 }),
          async (host, key, query) => {
            const request: RawRequest = {
              method: 'GET',
              path: query.length === 0 ? '/' : `/?${query.join('&')}`,
              headers: {
                host: pageHost(f, own, other, host),
                ...(key === undefined ? {} : { authorization: basic(key) }),
              },
            };
            await session.send(request, (reply) => {
              const label = `${describeRequest(request)}\n→ ${reply.status} ${reply.text.slice(0, 200)}`;
              // A query with text no database can store is refused like any other request.
              if (reply.status === 422) {
                expectServiceError(reply, label);
                return { rejected: true };
              }
              expect(reply.status, label).toBe(200);
              expect(reply.headers['content-type'], label).toBe(JSON_TYPE);
              return { rejected: true };
            });
          },
        ),
        fuzzParameters(5307, 40),
      );
    } finally {
      session.close();
    }
  }, 120_000);
  it('the portal invoice download: the link customer’s own issued invoices as a PDF, anything else the 404 page', async () => {
    const f = http();
    const { own, other, session } = await worlds(f);
    try {
      await fc.assert(
        fc.asyncProperty(
          often<LinkChoice>('valid', 'forged', 'expired', 'lone-customer', 'other-site', 'hostile'),
          often<'own' | 'own-open' | 'other-site' | 'json' | 'no-suffix' | 'hostile'>(
            'own',
            'own-open',
            'other-site',
            'json',
            'no-suffix',
            'hostile',
          ),
          often<HostChoice>('own', 'other', 'unknown'),
          fc.constantFrom(...HOSTILE_SEGMENTS),
          async (link, file, host, segment) => {
            const names = {
              own: `${own.invoiceUid}.pdf`,
              'own-open': `${own.openInvoiceUid}.pdf`,
              'other-site': `${other.invoiceUid}.pdf`,
              json: `${own.invoiceUid}.json`,
              'no-suffix': own.invoiceUid,
              hostile: segment,
            };
            const base = portalBase(f, own, other, link, segment);
            const request = pageRequest(pageHost(f, own, other, host), 'GET', `${base}/invoices/${names[file]}`);
            await session.send(request, (reply) => {
              const label = `${describeRequest(request)}\n→ ${reply.status} ${reply.text.slice(0, 200)}`;
              // Only the link's own customer's issued invoice, as its PDF, on the link's own site.
              const mayServe = link === 'valid' && host === 'own' && (file === 'own' || file === 'own-open');
              if (reply.status === 200 && reply.headers['content-type'] === 'application/pdf') {
                expect(mayServe, `${label}: served a PDF it must not`).toBe(true);
                expect(reply.text.startsWith('%PDF-'), label).toBe(true);
                expect(String(reply.headers['content-disposition']), label).toMatch(
                  /^attachment; filename="[\w-]+\.pdf"$/,
                );
                return { rejected: false };
              }
              expect(mayServe, `${label}: the link's own invoice was not served`).toBe(false);
              const verdict = judgeHosted(f, request, reply);
              expect(verdict.rejected, label).toBe(true);
              return verdict;
            });
          },
        ),
        fuzzParameters(5308, 80),
      );
    } finally {
      session.close();
    }
    expect(session.stats.accepted, JSON.stringify(session.stats)).toBeGreaterThan(0);
    expect(session.stats.rejected, JSON.stringify(session.stats)).toBeGreaterThan(session.stats.requests / 3);
  }, 120_000);

  it('invoice and credit note documents (PDF, HTML): a site’s own, with its key, on its host; anything else refused', async () => {
    const f = http();
    const { own, other, session } = await worlds(f);
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('invoice.pdf', 'invoice.html', 'open.pdf', 'credit.pdf', 'credit.html'),
          often<'own' | 'other-site' | 'hostile'>('own', 'other-site', 'hostile'),
          often<'host' | 'other' | 'none' | 'wrong'>('host', 'other', 'none', 'wrong'),
          often<HostChoice>('own', 'other', 'unknown'),
          fc.constantFrom(...HOSTILE_SEGMENTS),
          async (doc, whose, key, host, segment) => {
            const w = whose === 'other-site' ? other : own;
            const [kind, suffix] = doc.split('.') as [string, string];
            const uid =
              whose === 'hostile'
                ? segment
                : kind === 'invoice'
                  ? w.invoiceUid
                  : kind === 'open'
                    ? w.openInvoiceUid
                    : w.creditNoteUid;
            const path = `/${kind === 'credit' ? 'credit_notes' : 'invoices'}/${uid}.${suffix}`;
            const hostSite = host === 'own' ? own : host === 'other' ? other : undefined;
            const keys = {
              host: (hostSite ?? own).apiKey,
              other: (hostSite === other ? own : other).apiKey,
              none: undefined,
              wrong: 'not-a-key',
            };
            const request: RawRequest = {
              method: 'GET',
              path,
              headers: {
                host: pageHost(f, own, other, host),
                ...(keys[key] === undefined ? {} : { authorization: basic(keys[key]) }),
              },
            };
            await session.send(request, (reply) => {
              const label = `${describeRequest(request)} (key: ${key})\n→ ${reply.status} ${reply.text.slice(0, 200)}`;
              // A credit note has no HTML page; anything else is served to its own site's key on its host.
              const mayServe =
                key === 'host' &&
                hostSite !== undefined &&
                whose !== 'hostile' &&
                w === hostSite &&
                doc !== 'credit.html';
              if (reply.status === 200) {
                expect(mayServe, `${label}: served a document it must not`).toBe(true);
                if (suffix === 'pdf') {
                  expect(reply.headers['content-type'], label).toBe('application/pdf');
                  expect(reply.text.startsWith('%PDF-'), label).toBe(true);
                } else {
                  expect(reply.headers['content-type'], label).toBe(HTML_TYPE);
                  expect(reply.text, label).toContain(w.marker);
                }
                return { rejected: false };
              }
              expect(mayServe, `${label}: the site's own document was not served`).toBe(false);
              expect([400, 401, 404, 422], label).toContain(reply.status);
              expectServiceError(reply, label);
              return { rejected: true };
            });
          },
        ),
        fuzzParameters(5309, 80),
      );
    } finally {
      session.close();
    }
    expect(session.stats.accepted, JSON.stringify(session.stats)).toBeGreaterThan(0);
  }, 120_000);

  it('the API reference (/openapi.json, /docs, its script): public on any host, key and query; never 5xx, changes nothing', async () => {
    const f = http();
    const { own, other, session } = await worlds(f);
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('/openapi.json', '/docs', '/docs/api-reference.js'),
          often<HostChoice>('own', 'other', 'unknown'),
          fc.constantFrom(undefined, own.apiKey, other.apiKey, 'wrong'),
          fc.array(fc.constantFrom(...HOSTILE_SEGMENTS, 'a=1', 'x'), { maxLength: 3 }),
          async (path, host, key, query) => {
            const request: RawRequest = {
              method: 'GET',
              path: query.length === 0 ? path : `${path}?${query.join('&')}`,
              headers: {
                host: pageHost(f, own, other, host),
                ...(key === undefined ? {} : { authorization: basic(key) }),
              },
            };
            await session.send(request, (reply) => {
              const label = `${describeRequest(request)}\n→ ${reply.status} ${reply.text.slice(0, 200)}`;
              // No site's data in the reference: neither site's marker nor key.
              for (const w of [own, other]) {
                expect(reply.text, label).not.toContain(w.marker);
                expect(reply.text, label).not.toContain(w.apiKey);
              }
              if (path === '/docs/api-reference.js' && reply.status === 404) {
                // The script is served only when @scalar/api-reference is installed beside the server.
                expectServiceError(reply, label);
                return { rejected: true };
              }
              if (reply.status === 422) {
                expectServiceError(reply, label);
                return { rejected: true };
              }
              expect(reply.status, label).toBe(200);
              const type = String(reply.headers['content-type']);
              if (path === '/openapi.json') {
                expect(type, label).toBe(JSON_TYPE);
                expect(reply.json<{ openapi: string }>().openapi, label).toMatch(/^3\.1\./);
              } else if (path === '/docs') expect(type, label).toMatch(/^text\/html/i);
              else expect(type, label).toMatch(/^text\/javascript/i);
              return { rejected: true };
            });
          },
        ),
        fuzzParameters(5310, 30),
      );
    } finally {
      session.close();
    }
  }, 120_000);
});

describe('fuzz: malformed invoice, events and report requests never 5xx and change nothing when refused', () => {
  const http = useHttpFixture({ rateLimit: false, storage: 'sqlite-file', webhooks: { fetch: noNetworkFetch } });

  /** The main-API families fuzzed in this file (the others are in fuzz-db-subscriptions and fuzz-db-catalog). */
  const FAMILIES: readonly (readonly [family: string, seed: number, runs: number])[] = [
    ['invoices', 5311, 60],
    ['events', 5312, 50],
    ['reports', 5313, 50],
  ];

  for (const [family, seed, runs] of FAMILIES) {
    it(`${family}: ${runs} runs, every route of the family each run, dump compared after each request`, async () => {
      const stats = await fuzzApiFamily(http(), family, seed, runs);
      // The generators must mostly produce refusals, or the dump comparison would test little.
      expect(stats.rejected, JSON.stringify(stats)).toBeGreaterThan(stats.requests / 4);
    }, 120_000);
  }
});
