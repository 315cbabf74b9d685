import {
  assertNonce,
  constantTimeEqual,
  directResponseSignature,
  FORM_PARAMETER_LIMIT,
  type FormParams,
  type FormPath,
  type FormValue,
  generateNonce,
  mergeSecureParams,
  parseDirectTimestamp,
  parseSecureData,
  sha256Hex,
  unsignedBillingFields,
  verifyDirectRequestSignature,
} from '../domain/signing/index.js';
import { BillingError, ERROR_TABLE, invalid, notFound, ValidationCollector } from '../errors.js';
import type {
  AddressFields,
  DirectCallRecord,
  DirectCredentialRecord,
  SiteRecord,
  StorageTransaction,
} from '../ports/storage.js';
import { creditCardJson } from '../wire/serialize-credit-card.js';
import { customerJson } from '../wire/serialize-customer.js';
import { productJson } from '../wire/serialize-product.js';
import { subscriptionJson } from '../wire/serialize-subscription.js';
import { type WireContext, wireTimestamp } from '../wire/wire-context.js';
import { type BillingManifest, nextBillingManifest } from './billing-manifest.js';
import type { SignupComponentInput } from './component-billing.js';
import type { CustomerInput } from './customer-service.js';
import { SiteService, unauthorized } from './site-service.js';
import type {
  CreateSubscriptionInput,
  CreditCardInput,
  SubscriptionDeps,
  SubscriptionService,
  SubscriptionView,
} from './subscription-service.js';

/**
 * One direct post as the binding read it. `params` is the whole body parsed with bracket nesting
 * (`signup[customer][email]` nests), `secure[...]` included. `rawSecureData` is the `secure[data]`
 * value exactly as posted (form-decoded once, never re-serialised): the request signature covers
 * that string, and re-encoding the parsed form would change key order or escaping. When it is left
 * out, `params.secure.data` is used.
 */
export interface DirectPostForm {
  readonly params: FormParams;
  readonly rawSecureData?: string | undefined;
  /**
   * The whole form body as posted. Needed only to read `signup[components]` exactly as Rack does:
   * the map form `signup[components][<id>]=<qty>` has numeric keys that a bracket parser turns into
   * a list (losing the ids), and the list form `signup[components][][component_id]` starts a new
   * component each time a field repeats. Without it, components are read from `params`.
   */
  readonly rawBody?: string | undefined;
}

/** HTTP Basic credentials of a server-to-server direct call: the direct `api_id` and `api_password`. */
export interface DirectBasicCredentials {
  readonly apiId: string;
  readonly password: string;
}

/**
 * How a signup arrived. `form`: a browser post authenticated by the `secure[...]` signature and
 * answered by a redirect. `json`: a server-to-server call authenticated by HTTP Basic (`basic`) and
 * answered with the call's JSON instead of a redirect.
 */
export interface DirectPostOptions {
  readonly contentType: 'form' | 'json';
  readonly basic?: DirectBasicCredentials | undefined;
}

/**
 * What a direct post produced. `call` is the stored record (its `response` is the body a JSON
 * caller gets). `redirect` is where the browser goes, with the seven signed response parameters;
 * it is absent for JSON calls and whenever no trusted `redirect_uri` is known (a post whose
 * signature failed and whose credential has no registered default, or a post without any
 * `redirect_uri`): the binding then answers `call.response` with HTTP status `statusCode`. `error`
 * is the failure behind a non-success outcome, so a binding can log the unexpected ones.
 */
export interface DirectPostResult {
  readonly call: DirectCallRecord;
  readonly redirect?: URL;
  /** The HTTP status the main API would give for the same outcome (`200` on success). */
  readonly statusCode: number;
  /** The direct `result_code`: `2000` on success. */
  readonly resultCode: string;
  readonly error?: unknown;
}

/** One error of a call's result, as the service writes it. */
export interface DirectCallError {
  readonly attribute: string;
  readonly message: string;
}

/** `result` (and its duplicate `meta`) of a call's response. Codes are strings, as in the service's JSON. */
export interface DirectCallResult {
  readonly status_code: string;
  readonly result_code: string;
  readonly errors: readonly DirectCallError[];
}

/** The call record as `GET /api/v2/calls/{id}` returns it. */
export interface DirectCallJson {
  readonly id: string;
  readonly api_id: string;
  /** Integer seconds, as the service writes it at the top level (the request copy keeps the string). */
  readonly timestamp: number | null;
  readonly nonce: string | null;
  readonly success: boolean;
  readonly request: Readonly<Record<string, unknown>>;
  readonly response: Readonly<Record<string, unknown>>;
}

/** The direct `result_code` of a success. */
export const DIRECT_SUCCESS_RESULT_CODE = '2000';

/**
 * The idempotency scope under which `(api_id, timestamp, nonce)` triples were claimed before
 * migration 6; claims now live in the direct-call repository (`directCalls.claimPost`).
 */
export const DIRECT_NONCE_SCOPE = 'direct_nonce';

// Cardholder data never reaches a call record: a field whose name has one of
// these in any of its bracket segments is blanked to "" at any depth of the stored request, in the
// parsed params and inside the raw `secure[data]` string. Names are compared with case and every
// character but letters and digits dropped, so `card_number`, `card_number[]`, `Card-Number`,
// `cardNumber` and `CVV` are all caught.
const SENSITIVE_NAMES: ReadonlySet<string> = new Set([
  'cardnumber',
  'fullnumber',
  'cvv',
  'cvv2',
  'cvc',
  'verificationvalue',
  'expirationmonth',
  'expirationyear',
  'bankaccountnumber',
  'bankroutingnumber',
]);

/** How many field names the summary of a refused call keeps, and how long each may be. */
const SUMMARY_MAX_FIELDS = 50;
const SUMMARY_MAX_NAME = 100;
/** How long a secure value (`api_id`, `timestamp`, `nonce`) may be in a summary or a call's columns. */
const SUMMARY_MAX_VALUE = 64;
/** How many unsigned fields a refusal names one by one. */
const MAX_NAMED_FIELDS = 10;

const INTERNAL_MESSAGE = 'An error occurred while processing the request.';

/** What was established about a post before its operation runs. */
interface Authenticated {
  readonly credential: DirectCredentialRecord;
  readonly site: SiteRecord;
  /** Reflected or generated; what the response is signed over. */
  readonly timestamp: string;
  readonly nonce: string;
  /**
   * The request to store: a bounded summary (field names, the secure values capped) until the post
   * is admitted, then the whole request with card fields blanked. See {@link requestSummary}.
   */
  readonly request: Readonly<Record<string, unknown>>;
  /** The trusted place to send the browser, if any. */
  readonly redirectTo: URL | undefined;
}

/** A post that authenticated and passed the replay rules: its effective params and secure data. */
interface Admitted extends Authenticated {
  readonly params: FormParams;
  readonly secure: FormParams;
}

type Outcome =
  | { readonly ok: true; readonly body: Readonly<Record<string, unknown>> }
  | { readonly ok: false; readonly error: unknown };

/**
 * The signed direct-post interface: signups and card
 * updates posted by a browser form (or, for signups, by a server with HTTP Basic), each recorded as
 * a call and answered with a signed redirect, and the call read-back. Signups go through the same
 * {@link SubscriptionService.create} command as the main API, card updates through
 * {@link SubscriptionService.updateCard}. Every outcome of a post whose `api_id` names a site is
 * recorded as a call, auth failures included; a post with an unknown `api_id` cannot belong to any
 * site, so it is refused with `unauthorized` and leaves no call.
 */
export class DirectPostService {
  readonly #deps: SubscriptionDeps;
  readonly #subscriptions: SubscriptionService;
  readonly #sites: SiteService;

  constructor(deps: SubscriptionDeps, subscriptions: SubscriptionService) {
    this.#deps = deps;
    this.#subscriptions = subscriptions;
    this.#sites = new SiteService(deps);
  }

  /**
   * `POST /api/v2/signups`: creates a customer, payment profile and subscription from `signup[...]`
   * (secure data overriding normal fields), records the call and returns where to redirect. A form
   * post without `secure[timestamp]` or `secure[nonce]` gets generated ones, reflected in the
   * redirect; a repeated `(api_id, timestamp, nonce)` is refused with 4221 (only when both were sent),
   * and so is a post whose signed input (`api_id + timestamp + nonce + data`) a protected post used.
   * When secure data signs the bill, unsigned fields may only carry what the customer types (4220).
   * Throws `unauthorized` only when the `api_id` (or Basic user) matches no active credential.
   */
  async signup(form: DirectPostForm, options: DirectPostOptions): Promise<DirectPostResult> {
    if (options.contentType === 'json') return this.#jsonSignup(form, options.basic);
    const admitted = await this.#admit(form, 'signup');
    if (!admitted.ok) return admitted.result;
    const post = admitted.post;
    const outcome = await this.#attempt(async () => {
      const input = signupInput(post.params.signup, (errors) => formComponents(form, post, errors));
      const view = await this.#subscriptions.create(post.site.subdomain, input);
      return { signup: await this.#signupBody(post.site, view) };
    });
    return this.#finish(post, outcome, signupAttribute);
  }

  /**
   * `POST /api/v2/subscriptions/{id}/card_update`: replaces the subscription's card from
   * `payment_profile[...]`. The nonce is required (4011 without it), and `subscription_id` must be in
   * the signed secure data and equal the path's id, so a signed form cannot be replayed against
   * another subscription. Throws `unauthorized` only for an unknown `api_id`.
   */
  async cardUpdate(subscriptionId: string | number, form: DirectPostForm): Promise<DirectPostResult> {
    const admitted = await this.#admit(form, 'card_update', String(subscriptionId));
    if (!admitted.ok) return admitted.result;
    const post = admitted.post;
    const outcome = await this.#attempt(async () => {
      const id = cardUpdateTarget(String(subscriptionId), post.secure.subscription_id);
      const view = await this.#subscriptions.updateCard(post.site.subdomain, id, cardUpdateInput(post.params));
      return await this.#cardUpdateBody(post.site, view);
    });
    return this.#finish(post, outcome, cardUpdateAttribute);
  }

  /**
   * `GET /api/v2/calls/{id}`: a call of the site the direct credentials belong to. Throws
   * `unauthorized` for a wrong `api_id` or password and `not_found` for an id that is not a call of
   * that site (another site's call included, so its existence is not revealed).
   */
  async readCall(apiId: string, password: string, callId: string): Promise<DirectCallRecord> {
    // Text no credential can hold (NUL, lone surrogates) never reaches the database.
    if (!storableText(apiId)) throw unauthorized();
    const { site } = await this.#sites.authenticateDirect(apiId, password);
    const call = /^[0-9a-f]{40}$/i.test(callId)
      ? await this.#deps.storage.transaction((tx) => tx.directCalls.findById(site.id, callId.toLowerCase()))
      : undefined;
    if (call === undefined) throw notFound('Call', callId);
    return call;
  }

  async #jsonSignup(form: DirectPostForm, basic: DirectBasicCredentials | undefined): Promise<DirectPostResult> {
    const known = await this.#credential(basic?.apiId);
    const now = this.#deps.clock.now();
    const refused: Authenticated = {
      ...known,
      timestamp: String(Math.floor(now.getTime() / 1000)),
      nonce: generateNonce(),
      request: requestSummary(form.params),
      redirectTo: undefined,
    };
    // The same comparison as every other Basic check, so a wrong password is indistinguishable by time.
    const presented = sha256Hex(typeof basic?.password === 'string' ? basic.password : '');
    if (!constantTimeEqual(presented, known.credential.apiPasswordHash)) {
      return this.#finish(refused, { ok: false, error: unauthorized() }, signupAttribute);
    }
    if (!storableParams(form.params)) {
      return this.#finish(refused, { ok: false, error: unstorableText() }, signupAttribute);
    }
    const post: Authenticated = { ...refused, request: redactParams(form.params) };
    const outcome = await this.#attempt(async () => {
      const signup = asParams(form.params.signup);
      const input = signupInput(form.params.signup, (errors) => componentsFromParams(signup.components, errors));
      const view = await this.#subscriptions.create(known.site.subdomain, input);
      return { signup: await this.#signupBody(known.site, view) };
    });
    return this.#finish(post, outcome, signupAttribute);
  }

  /**
   * Authenticates a form post and applies the replay rules, in the order that lets each failure be
   * reported as far as it can be trusted: signature (4001, redirect only to a registered default),
   * nonce presence on card updates (4011), the form itself (4220: format of timestamp and nonce,
   * the redirect target, text no database can store, more fields than the parser reads, unsigned
   * fields that would change a signed bill), then the atomic replay claim (4221). Until a post is
   * admitted its call keeps only a bounded summary of the request; `pathText` is the card update's
   * subscription id as it came in the path.
   */
  async #admit(
    form: DirectPostForm,
    kind: 'signup' | 'card_update',
    pathText?: string,
  ): Promise<{ ok: true; post: Admitted } | { ok: false; result: DirectPostResult }> {
    const secure = asParams(form.params.secure);
    const known = await this.#credential(secure.api_id);
    const data = form.rawSecureData ?? secure.data;
    const timestampRaw = secure.timestamp;
    const nonceRaw = secure.nonce;
    const now = this.#deps.clock.now();
    const given = (value: FormValue | undefined): value is string => typeof value === 'string' && value !== '';
    const timestampGiven = given(timestampRaw);
    const nonceGiven = given(nonceRaw);
    const timestamp = timestampGiven ? timestampRaw : String(Math.floor(now.getTime() / 1000));
    // A card update without a nonce is refused, so nothing is generated for it: the response
    // reflects the empty nonce the request was signed with.
    const nonce = nonceGiven ? nonceRaw : kind === 'signup' ? generateNonce() : '';
    const base = { ...known, timestamp, nonce, request: requestSummary(form.params) };
    const fallback = redirectTarget(known.credential.defaultRedirectUri);
    const textOrAbsent = (value: FormValue | undefined) => value === undefined || typeof value === 'string';
    const signed =
      textOrAbsent(timestampRaw) &&
      textOrAbsent(nonceRaw) &&
      textOrAbsent(data) &&
      verifyDirectRequestSignature(
        {
          apiId: known.credential.apiId,
          timestamp: timestampRaw as string | undefined,
          nonce: nonceRaw as string | undefined,
          data: data as string | undefined,
        },
        known.credential.apiSecret,
        secure.signature,
      );
    if (!signed) {
      // The redirect_uri in unverified data is attacker-controlled; only the registered default is trusted.
      const error = new BillingError('unauthorized', 'Signature: does not match the request.', {
        details: [{ message: 'Signature: does not match the request.', attribute: 'signature' }],
      });
      return { ok: false, result: await this.#finish({ ...base, redirectTo: fallback.url }, { ok: false, error }) };
    }
    const secureParams = typeof data === 'string' ? parseSecureData(data) : {};
    const requested = secureParams.redirect_uri;
    const target = requested === undefined ? fallback : redirectTarget(requested);
    const post: Admitted = {
      ...base,
      redirectTo: target.url,
      secure: secureParams,
      params: mergeSecureParams(withoutSecure(form.params), secureParams),
    };
    if (kind === 'card_update' && !nonceGiven) {
      const error = new BillingError('nonce_missing', 'Nonce: is required for a card update.', {
        details: [{ message: 'Nonce: is required for a card update.', attribute: 'nonce' }],
      });
      return { ok: false, result: await this.#finish(post, { ok: false, error }) };
    }
    const errors = new ValidationCollector();
    const seconds = timestampGiven ? errors.capture(() => parseDirectTimestamp(timestampRaw)) : undefined;
    if (nonceGiven) errors.capture(() => assertNonce(nonceRaw));
    if (target.problem !== undefined) errors.add(target.problem, 'redirect_uri');
    // The decoded secure data too: its raw string carries a NUL only as `%00`.
    const storable = storableParams(form.params) && storableParams(secureParams);
    if (!storable || (pathText !== undefined && !storableText(pathText))) {
      errors.add(UNSTORABLE_MESSAGE, 'base');
    }
    // qs reads the first FORM_PARAMETER_LIMIT pairs and drops the rest, but components are read
    // from the raw pairs: a longer form would let a field the checks below never saw take effect.
    if (form.rawBody !== undefined && form.rawBody.split('&').length > FORM_PARAMETER_LIMIT) {
      errors.add(`Request: has more than ${FORM_PARAMETER_LIMIT} fields.`, 'base');
    }
    if (kind === 'signup')
      refuseUnsignedBillingFields(unsignedBillingFields(withoutSecure(form.params), secureParams), errors);
    if (!errors.ok) {
      return { ok: false, result: await this.#finish(post, { ok: false, error: collected(errors) }) };
    }
    // The replay claim (no repeated timestamp and nonce, hardened): the exact signed input is claimed with the
    // `(api_id, timestamp, nonce)` key, in one atomic step of the port, so that shifting characters
    // between timestamp, nonce and data (the signature covers their plain concatenation) is a
    // duplicate too. Only a post with a sent timestamp and nonce is protected; one without is never
    // refused as a repeat of another unprotected post, but is refused when its signed input is a
    // protected post's. The claim is its own committed transaction, before any work, so a post is
    // spent whatever its outcome and two racing copies cannot both pass.
    // The signature verified, so each part is text or absent.
    const part = (value: FormValue | undefined) => (typeof value === 'string' ? value : '');
    const signedInput = known.credential.apiId + part(timestampRaw) + part(nonceRaw) + part(data);
    const claimed = await this.#deps.storage.transaction((tx) =>
      tx.directCalls.claimPost({
        siteId: known.site.id,
        inputHash: sha256Hex(signedInput),
        nonceKey: seconds !== undefined && nonceGiven ? `${known.credential.apiId}|${seconds}|${nonceRaw}` : null,
        at: now,
      }),
    );
    if (!claimed) {
      const error = new BillingError('duplicate_submission', DUPLICATE_MESSAGE, {
        details: [{ message: DUPLICATE_MESSAGE, attribute: 'nonce' }],
      });
      return { ok: false, result: await this.#finish(post, { ok: false, error }) };
    }
    return {
      ok: true,
      post: { ...post, request: redactRequest(form.params, typeof data === 'string' ? data : undefined) },
    };
  }

  /** The active credential for an api_id and its site; `unauthorized` (and no call) when there is none. */
  async #credential(apiId: FormValue | undefined): Promise<{ credential: DirectCredentialRecord; site: SiteRecord }> {
    // Text no credential can hold (NUL, lone surrogates) is not looked up: Postgres refuses it.
    if (typeof apiId !== 'string' || apiId === '' || !storableText(apiId)) throw unauthorized();
    const found = await this.#deps.storage.transaction(async (tx) => {
      const credential = await tx.credentials.findDirectByApiId(apiId);
      const site = credential === undefined ? undefined : await tx.sites.findById(credential.siteId);
      return credential && site ? { credential, site } : undefined;
    });
    if (found === undefined) throw unauthorized();
    return found;
  }

  async #attempt(work: () => Promise<Readonly<Record<string, unknown>>>): Promise<Outcome> {
    try {
      return { ok: true, body: await work() };
    } catch (error) {
      return { ok: false, error };
    }
  }

  /** Records the call of an outcome and builds the signed redirect. */
  async #finish(
    post: Authenticated,
    outcome: Outcome,
    attributeOf: (attribute: string) => string = (attribute) => attribute,
  ): Promise<DirectPostResult> {
    const { statusCode, resultCode, errors } = outcome.ok
      ? { statusCode: 200, resultCode: DIRECT_SUCCESS_RESULT_CODE, errors: [] }
      : failureOf(outcome.error, attributeOf);
    const result: DirectCallResult = { status_code: String(statusCode), result_code: resultCode, errors };
    const response = { result, meta: { ...result }, ...(outcome.ok ? outcome.body : {}) };
    const call = await this.#deps.storage.transaction((tx) =>
      tx.directCalls.insert({
        id: generateNonce(),
        siteId: post.site.id,
        apiId: post.credential.apiId,
        // What the post sent, as far as it can be stored: an admitted post's values pass unchanged.
        nonce: post.nonce === '' ? null : storedValue(post.nonce),
        timestamp: storedValue(post.timestamp),
        success: outcome.ok,
        request: post.request,
        response,
        createdAt: this.#deps.clock.now(),
      }),
    );
    const redirect = post.redirectTo === undefined ? undefined : signedRedirect(post, call.id, statusCode, resultCode);
    return {
      call,
      ...(redirect === undefined ? {} : { redirect }),
      statusCode,
      resultCode,
      ...(outcome.ok ? {} : { error: outcome.error }),
    };
  }

  async #signupBody(site: SiteRecord, view: SubscriptionView): Promise<Record<string, unknown>> {
    const [family, manifest] = await this.#deps.storage.transaction(
      async (tx) =>
        [
          await familyOf(tx, site.id, view),
          await nextBillingManifest(tx, site, view.subscription, this.#deps.clock.now()),
        ] as const,
    );
    const context = wireContextOf(site);
    return {
      product: productJson(view.product, context, family),
      customer: customerJson(view.customer, context),
      payment_profile: view.paymentProfile === null ? null : creditCardJson(view.paymentProfile),
      subscription: subscriptionJson(view, context, family),
      next_billing_manifest: manifestJson(manifest, context),
    };
  }

  async #cardUpdateBody(site: SiteRecord, view: SubscriptionView): Promise<Record<string, unknown>> {
    const family = await this.#deps.storage.transaction((tx) => familyOf(tx, site.id, view));
    return {
      payment_profile: view.paymentProfile === null ? null : creditCardJson(view.paymentProfile),
      subscription: subscriptionJson(view, wireContextOf(site), family),
    };
  }
}

/** A billing manifest in the service's JSON. */
function manifestJson(manifest: BillingManifest, context: WireContext): Record<string, unknown> {
  return {
    period_type: manifest.periodType,
    start_date: wireTimestamp(manifest.startDate, context),
    end_date: wireTimestamp(manifest.endDate, context),
    subtotal_in_cents: manifest.subtotalInCents,
    total_tax_in_cents: manifest.totalTaxInCents,
    total_discount_in_cents: manifest.totalDiscountInCents,
    total_in_cents: manifest.totalInCents,
    line_items: manifest.lineItems.map((item) => ({
      transaction_type: item.transactionType,
      kind: item.kind,
      amount_in_cents: item.amountInCents,
      memo: item.memo,
      discount_amount_in_cents: item.discountAmountInCents,
      taxable_amount_in_cents: item.taxableAmountInCents,
      ...(item.componentId === null ? {} : { component_id: item.componentId }),
    })),
  };
}

/**
 * A call record as `GET /api/v2/calls/{id}` answers it: `{"call":{...}}` with the top-level
 * timestamp as an integer. The stored request already has card data blanked.
 */
export function directCallJson(call: DirectCallRecord): { call: DirectCallJson } {
  const seconds = call.timestamp === null ? null : Number(call.timestamp);
  return {
    call: {
      id: call.id,
      api_id: call.apiId,
      timestamp: seconds !== null && Number.isSafeInteger(seconds) ? seconds : null,
      nonce: call.nonce,
      success: call.success,
      request: call.request,
      response: call.response,
    },
  };
}

/**
 * Reads a form-encoded direct post (`application/x-www-form-urlencoded` body text): the whole body
 * parsed with bracket nesting by qs, with the limits of {@link parseSecureData}, and the
 * `secure[data]` value taken separately as the exact form-decoded string the browser sent, which is
 * what the signature covers. A repeated `secure[data]` gives no raw string (it parses as a list,
 * which never verifies).
 */
export function parseDirectForm(body: string): DirectPostForm {
  const raw = new URLSearchParams(body).getAll('secure[data]');
  return { params: parseSecureData(body), rawSecureData: raw.length === 1 ? raw[0] : undefined, rawBody: body };
}

/**
 * Converts a JSON request body into {@link FormParams}, the shape a form post parses to, so that a
 * server-to-server JSON signup runs through the same field reading as a form: numbers and booleans
 * become their text, `null` becomes `""`, lists and objects nest. Anything that is not an object
 * gives `{}`.
 */
export function formParamsFromJson(value: unknown): FormParams {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  const out: Record<string, FormValue> = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === '__proto__') continue;
    out[key] = formValueFromJson(item);
  }
  return out;
}

function formValueFromJson(value: unknown): FormValue {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(formValueFromJson);
  if (typeof value === 'object') return formParamsFromJson(value);
  return String(value);
}

function asParams(value: FormValue | undefined): FormParams {
  return typeof value === 'object' && !Array.isArray(value) ? (value as FormParams) : {};
}

function withoutSecure(params: FormParams): FormParams {
  const { secure: _secure, ...rest } = params;
  return rest;
}

function collected(errors: ValidationCollector): BillingError {
  try {
    errors.throwIfAny();
  } catch (error) {
    return error as BillingError;
  }
  return new BillingError('internal', 'No validation error was collected.');
}

function redirectTarget(value: FormValue | null | undefined): { url?: URL; problem?: string } {
  const missing = 'Redirect URI: must be given in secure data or registered as the default for the API user.';
  if (value === null || value === undefined || value === '') return { problem: missing };
  if (typeof value !== 'string') return { problem: 'Redirect URI: must be a single URL.' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: 'Redirect URI: must be an absolute http or https URL.' };
  }
  // Anything but http(s) (javascript:, data:) would turn the redirect into script execution.
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { problem: 'Redirect URI: must be an absolute http or https URL.' };
  }
  return { url };
}

function signedRedirect(post: Authenticated, callId: string, statusCode: number, resultCode: string): URL {
  const url = new URL(post.redirectTo!.href);
  const apiId = post.credential.apiId;
  const signature = directResponseSignature(
    { apiId, timestamp: post.timestamp, nonce: post.nonce, statusCode, resultCode, callId },
    post.credential.apiSecret,
  );
  const pairs: [string, string][] = [
    ['api_id', apiId],
    ['timestamp', post.timestamp],
    ['nonce', post.nonce],
    ['status_code', String(statusCode)],
    ['result_code', resultCode],
    ['call_id', callId],
    ['signature', signature],
  ];
  for (const [name, value] of pairs) url.searchParams.set(name, value);
  return url;
}

function failureOf(
  error: unknown,
  attributeOf: (attribute: string) => string,
): { statusCode: number; resultCode: string; errors: DirectCallError[] } {
  if (!(error instanceof BillingError)) {
    return { ...codesOf('internal'), errors: [{ attribute: 'base', message: INTERNAL_MESSAGE }] };
  }
  const codes = codesOf(error.code);
  // A 5xx message may carry driver details; only the generic text is stored and shown.
  if (codes.statusCode >= 500) return { ...codes, errors: [{ attribute: 'base', message: INTERNAL_MESSAGE }] };
  return {
    ...codes,
    errors: error.details.map((detail) => ({
      attribute: detail.attribute === undefined ? 'base' : attributeOf(detail.attribute),
      message: detail.message,
    })),
  };
}

function codesOf(code: keyof typeof ERROR_TABLE): { statusCode: number; resultCode: string } {
  const mapping = ERROR_TABLE[code];
  return { statusCode: mapping.httpStatus, resultCode: mapping.resultCode };
}

/** Engine attribute names (main-API wording) in the direct form's wording: `payment_profile.card_number`. */
function signupAttribute(attribute: string): string {
  if (attribute === 'product_handle') return 'product.handle';
  if (attribute === 'product_id') return 'product.id';
  if (attribute === 'customer_id') return 'customer.id';
  return cardUpdateAttribute(attribute);
}

function cardUpdateAttribute(attribute: string): string {
  if (attribute === 'credit_card.full_number' || attribute === 'payment_profile.full_number') {
    return 'payment_profile.card_number';
  }
  if (attribute === 'credit_card') return 'payment_profile';
  if (attribute.startsWith('credit_card.')) return `payment_profile.${attribute.slice('credit_card.'.length)}`;
  return attribute;
}

function wireContextOf(site: SiteRecord): WireContext {
  return { timeZone: site.timeZone, currency: site.currency, compat: 'spec' };
}

function familyOf(tx: StorageTransaction, siteId: number, view: SubscriptionView) {
  return tx.catalog.findFamily(siteId, view.product.product.familyId);
}

/**
 * Whether a field name is a card field: any of its bracket segments (`payment_profile[card_number][]`
 * has three), compared without case and without anything but letters and digits.
 */
function sensitiveName(name: string): boolean {
  for (const segment of name.split(/[[\]]+/)) {
    if (SENSITIVE_NAMES.has(segment.toLowerCase().replace(/[^a-z0-9]/g, ''))) return true;
  }
  return false;
}

/** The parsed params with every sensitive card field blanked, at any depth and whatever its value's shape. */
function redactParams(params: FormParams): FormParams {
  const out: Record<string, FormValue> = {};
  for (const [key, value] of Object.entries(params)) out[key] = sensitiveName(key) ? '' : redactValue(value);
  return out;
}

function redactValue(value: FormValue): FormValue {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(redactValue);
  return redactParams(value as FormParams);
}

/**
 * The request to store: params blanked, and the raw `secure[data]` kept as submitted except that the
 * value of any sensitive pair in it is emptied (a merchant could sign card fields into it).
 */
function redactRequest(params: FormParams, rawData: string | undefined): FormParams {
  const redacted = redactParams(params);
  if (rawData === undefined || redacted.secure === undefined) return redacted;
  return { ...redacted, secure: { ...asParams(redacted.secure), data: redactFormString(rawData) } };
}

function redactFormString(text: string): string {
  return text
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const rawKey = equals === -1 ? pair : pair.slice(0, equals);
      let key: string;
      try {
        key = decodeURIComponent(rawKey.replace(/\+/g, ' '));
      } catch {
        key = rawKey;
      }
      return sensitiveName(key) ? `${rawKey}=` : pair;
    })
    .join('&');
}

const DUPLICATE_MESSAGE =
  'Request: has already been submitted (this timestamp and nonce, or the same signed timestamp, nonce and data, were used before).';

const UNSTORABLE_MESSAGE = 'Request: contains a NUL character or text that is not valid Unicode.';

/** The refusal of a request whose text no database can store (4220). */
function unstorableText(): BillingError {
  return new BillingError('validation', UNSTORABLE_MESSAGE, {
    details: [{ message: UNSTORABLE_MESSAGE, attribute: 'base' }],
  });
}

// A NUL, or a UTF-16 surrogate that is not half of a pair (only JSON can carry one: `"\ud800"`).
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding a NUL is what this pattern is for.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether text can be stored as it is: Postgres refuses NUL in text and lone surrogates in JSON. */
function storableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** Whether every key and value of parsed params, at any depth, is {@link storableText}. */
function storableParams(value: FormValue): boolean {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.every(storableParams);
  return Object.entries(value as FormParams).every(([key, item]) => storableText(key) && storableParams(item));
}

/** Text made storable and short: unstorable characters become U+FFFD and the text is cut at `max` characters. */
function storedText(text: string, max: number): string {
  const cleaned = text.replace(new RegExp(UNSTORABLE, 'g'), '\uFFFD');
  return cleaned.length > max ? `${cleaned.slice(0, max)}…` : cleaned;
}

/** A secure value as a call stores it: unchanged when it is short, storable text (every admitted one is). */
function storedValue(text: string): string {
  return storedText(text, SUMMARY_MAX_VALUE);
}

/**
 * What the call of a refused post keeps of its request (until a post is admitted its sender is not
 * trusted, and anyone who knows the public `api_id` can send one): the `api_id`, `timestamp` and
 * `nonce` it sent, each capped, and the names of the fields it sent in bracket notation (at most
 * {@link SUMMARY_MAX_FIELDS}, each cut at {@link SUMMARY_MAX_NAME} characters, runs of twelve or more
 * digits masked), never a value. So a refused call stays small whatever was posted.
 */
function requestSummary(params: FormParams): Readonly<Record<string, unknown>> {
  const secure = asParams(params.secure);
  const secureValues: Record<string, string> = {};
  for (const name of ['api_id', 'timestamp', 'nonce'] as const) {
    const value = secure[name];
    if (typeof value === 'string') secureValues[name] = storedValue(value);
  }
  const names: string[] = [];
  let count = 0;
  const visit = (value: FormValue, name: string) => {
    if (typeof value === 'string') {
      count += 1;
      if (names.length < SUMMARY_MAX_FIELDS && !names.includes(name)) names.push(name);
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item, `${name}[]`);
    } else {
      for (const [key, item] of Object.entries(value as FormParams)) visit(item, name === '' ? key : `${name}[${key}]`);
    }
  };
  visit(params, '');
  return {
    summary: true,
    secure: secureValues,
    fields: names.map((name) =>
      storedText(
        name.replace(/\d{12,}/g, (digits) => 'X'.repeat(digits.length)),
        SUMMARY_MAX_NAME,
      ),
    ),
    field_count: count,
  };
}

/** A form path in bracket notation: `signup[product][id]`. */
function bracketName(path: FormPath): string {
  const [first = '', ...rest] = path;
  return first + rest.map((key) => `[${key}]`).join('');
}

/**
 * Records the refusal of unsigned fields that would change a signed bill (4220): one problem per
 * field, the first {@link MAX_NAMED_FIELDS} by name, attributes in the form's wording
 * (`product.id`).
 */
function refuseUnsignedBillingFields(paths: readonly FormPath[], errors: ValidationCollector): void {
  for (const path of paths.slice(0, MAX_NAMED_FIELDS)) {
    const name = storedText(bracketName(path), SUMMARY_MAX_NAME);
    errors.add(
      `${name}: cannot be sent unsigned. This form's secure data signs what the signup is billed, so normal fields may only carry the customer's details and card; sign it in secure[data] or leave it out.`,
      storedText(path.slice(1).join('.'), SUMMARY_MAX_NAME),
    );
  }
  if (paths.length > MAX_NAMED_FIELDS) {
    errors.add(
      `Signup: ${paths.length - MAX_NAMED_FIELDS} more fields cannot be sent unsigned for the same reason.`,
      'signup',
    );
  }
}

/** A text field of the form; `undefined` when absent, a validation problem when it is not text. */
function text(value: FormValue | undefined, label: string, attribute: string, errors: ValidationCollector) {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  errors.add(`${label}: must be text.`, attribute);
  return undefined;
}

function positiveId(value: string | undefined, label: string, attribute: string, errors: ValidationCollector) {
  if (value === undefined || value === '') return undefined;
  const id = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (Number.isSafeInteger(id) && id > 0) return id;
  errors.add(`${label}: must be a positive whole number.`, attribute);
  return undefined;
}

const ADDRESS_FIELDS: readonly [string, keyof AddressFields][] = [
  ['address', 'address'],
  ['address_2', 'address2'],
  ['city', 'city'],
  ['state', 'state'],
  ['zip', 'zip'],
  ['country', 'country'],
];

/**
 * `signup[...]` (the service's signup fields) as the input of the main API's signup command:
 * product by handle or id, a new customer or `customer[id]`, the card from `payment_profile`,
 * coupons, components (read by `readComponents`, which knows where they came from), subscription
 * metafields, `subscription[snap_day]` / `[next_billing_at]` and `offer_id` (the signup the offer
 * stands for, recorded on the subscription as the main API's is). Card billing-address fields are
 * not read at signup: the engine's signup takes the card's address from the customer.
 */
function signupInput(
  value: FormValue | undefined,
  readComponents: (errors: ValidationCollector) => SignupComponentInput[] | undefined,
): CreateSubscriptionInput {
  const errors = new ValidationCollector();
  if (value !== undefined && (typeof value !== 'object' || Array.isArray(value))) {
    errors.add('Signup: must be a group of fields.', 'signup');
    errors.throwIfAny();
  }
  const signup = asParams(value);
  const product = asParams(signup.product);
  const customer = asParams(signup.customer);
  const profile = asParams(signup.payment_profile);
  const subscription = asParams(signup.subscription);
  const input: { -readonly [K in keyof CreateSubscriptionInput]: CreateSubscriptionInput[K] } = {};

  const handle = text(product.handle, 'Product handle', 'product.handle', errors);
  const productId = positiveId(
    text(product.id, 'Product id', 'product.id', errors),
    'Product id',
    'product.id',
    errors,
  );
  if (productId !== undefined) input.productId = productId;
  else if (handle !== undefined) input.productHandle = handle;

  const customerId = positiveId(
    text(customer.id, 'Customer id', 'customer.id', errors),
    'Customer id',
    'customer.id',
    errors,
  );
  if (customerId !== undefined) input.customerId = customerId;
  else if (signup.customer !== undefined) input.customer = customerInput(customer, errors);

  if (signup.payment_profile !== undefined) input.creditCard = cardInput(profile, errors);

  const couponCode = text(signup.coupon_code, 'Coupon code', 'coupon_code', errors);
  if (couponCode !== undefined && couponCode !== '') input.couponCode = couponCode;
  if (signup.coupon_codes !== undefined) {
    const codes = Array.isArray(signup.coupon_codes) ? signup.coupon_codes : [signup.coupon_codes];
    const texts = codes.map((code) => text(code, 'Coupon codes', 'coupon_codes', errors) ?? '').filter((c) => c !== '');
    if (texts.length > 0) input.couponCodes = texts;
  }
  if (signup.metafields !== undefined) {
    const metafields: Record<string, string> = {};
    for (const [name, item] of Object.entries(asParams(signup.metafields))) {
      const field = text(item, `Metafield ${name}`, `metafields.${name}`, errors);
      if (field !== undefined) metafields[name] = field;
    }
    input.metafields = metafields;
  }
  const snapDay = text(subscription.snap_day, 'Snap day', 'subscription.snap_day', errors);
  if (snapDay !== undefined && snapDay !== '') input.snapDay = snapDay === 'end' ? 'end' : Number(snapDay);
  const nextBillingAt = text(subscription.next_billing_at, 'Next billing at', 'subscription.next_billing_at', errors);
  if (nextBillingAt !== undefined && nextBillingAt !== '') input.nextBillingAt = nextBillingAt;

  const components = readComponents(errors);
  if (components !== undefined && components.length > 0) input.components = components;
  // `signup[currency]`: the site's only (checked by the signup command); blank means the site's.
  const currency = text(signup.currency, 'Currency', 'currency', errors)?.trim();
  if (currency !== undefined && currency !== '') input.currency = currency;
  // An offer (`signup[offer_id]`: its id, or `handle:<handle>`) stands for a product, components and coupons.
  const offerId = text(signup.offer_id, 'Offer id', 'offer_id', errors)?.trim();
  if (offerId !== undefined && offerId !== '') input.offerId = /^\d+$/.test(offerId) ? Number(offerId) : offerId;
  errors.throwIfAny();
  return input;
}

const COMPONENTS_PREFIX = 'signup[components]';

/**
 * The components of a form signup. Signed components replace the form's whole (a form field can
 * neither add a component to a signed set nor change a signed quantity), as lists do in
 * {@link mergeSecureParams}; both are read from the raw pairs when the raw strings are at hand.
 */
function formComponents(
  form: DirectPostForm,
  post: Admitted,
  errors: ValidationCollector,
): SignupComponentInput[] | undefined {
  const rawData = form.rawSecureData ?? asParams(form.params.secure).data;
  if (typeof rawData === 'string') {
    const signed = componentPairs(rawData);
    if (signed.length > 0) return componentsFromPairs(signed, errors);
  }
  if (form.rawBody !== undefined) {
    const pairs = componentPairs(form.rawBody);
    return pairs.length === 0 ? undefined : componentsFromPairs(pairs, errors);
  }
  return componentsFromParams(asParams(post.params.signup).components, errors);
}

function componentPairs(text: string): [string, string][] {
  return [...new URLSearchParams(text)].filter(([key]) => key.startsWith(COMPONENTS_PREFIX));
}

/**
 * Components from raw form pairs, the way Rack builds them: `[<id>]=<qty>` is one component with a
 * quantity; `[][field]=v` appends a new component whenever the last one already has `field` (so
 * `component_id` must come first); `[<n>][field]=v` groups by index.
 */
function componentsFromPairs(pairs: readonly [string, string][], errors: ValidationCollector): SignupComponentInput[] {
  const entries: Record<string, string>[] = [];
  const indexed = new Map<string, Record<string, string>>();
  for (const [key, value] of pairs) {
    const rest = key.slice(COMPONENTS_PREFIX.length);
    const map = /^\[([^\][]+)\]$/.exec(rest);
    const list = /^\[\]\[([^\][]+)\]$/.exec(rest);
    const numbered = /^\[(\d+)\]\[([^\][]+)\]$/.exec(rest);
    if (map?.[1] !== undefined) {
      entries.push({ component_id: map[1], quantity: value });
    } else if (list?.[1] !== undefined) {
      const last = entries.at(-1);
      if (last === undefined || list[1] in last || indexedEntry(indexed, last)) entries.push({ [list[1]]: value });
      else last[list[1]] = value;
    } else if (numbered?.[1] !== undefined && numbered[2] !== undefined) {
      let entry = indexed.get(numbered[1]);
      if (entry === undefined) {
        entry = {};
        indexed.set(numbered[1], entry);
        entries.push(entry);
      }
      entry[numbered[2]] = value;
    } else {
      errors.add(`Components: '${key}' is not a component field.`, 'components');
    }
  }
  return entries.map(componentInput);
}

function indexedEntry(indexed: ReadonlyMap<string, Record<string, string>>, entry: Record<string, string>): boolean {
  for (const value of indexed.values()) if (value === entry) return true;
  return false;
}

/**
 * Components from parsed params (a JSON signup, or a form whose raw body was not kept): a list of
 * `{component_id, quantity, ...}` objects, or an object keyed by component id (or handle) whose
 * values are quantities or field objects.
 */
function componentsFromParams(
  value: FormValue | undefined,
  errors: ValidationCollector,
): SignupComponentInput[] | undefined {
  if (!given(value)) return undefined;
  const fieldsOf = (item: FormValue, reference?: string): Record<string, string> | undefined => {
    if (typeof item === 'string')
      return reference === undefined ? undefined : { component_id: reference, quantity: item };
    if (Array.isArray(item)) return undefined;
    const fields: Record<string, string> = reference === undefined ? {} : { component_id: reference };
    for (const [name, field] of Object.entries(item as FormParams)) {
      if (typeof field !== 'string') return undefined;
      fields[name] = field;
    }
    return fields;
  };
  const items: (Record<string, string> | undefined)[] = Array.isArray(value)
    ? value.map((item) => fieldsOf(item))
    : Object.entries(asParams(value)).map(([reference, item]) => fieldsOf(item, reference));
  if (items.some((item) => item === undefined)) {
    errors.add('Components: each component must name a component_id and give its quantity.', 'components');
    return undefined;
  }
  return (items as Record<string, string>[]).map(componentInput);
}

/**
 * One component's fields as the signup command takes them: a numeric `component_id` is the id, any
 * other (`handle:pro-seats` or `pro-seats`) a handle. `price_point_id` is not read: the engine has
 * one price per component version, which is where the service falls back for a price point it does
 * not know.
 */
function componentInput(fields: Readonly<Record<string, string>>): SignupComponentInput {
  const reference = (fields.component_id ?? '').trim();
  const id = /^\d+$/.test(reference) ? Number(reference) : undefined;
  const handle = reference.startsWith('handle:') ? reference.slice('handle:'.length) : reference;
  return {
    ...(id !== undefined && Number.isSafeInteger(id) ? { componentId: id } : reference === '' ? {} : { handle }),
    ...(fields.quantity === undefined ? {} : { quantity: fields.quantity }),
    ...(fields.allocated_quantity === undefined ? {} : { allocatedQuantity: fields.allocated_quantity }),
    ...(fields.unit_balance === undefined ? {} : { unitBalance: fields.unit_balance }),
  };
}

function given(value: FormValue | undefined): boolean {
  if (value === undefined || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

function customerInput(fields: FormParams, errors: ValidationCollector): CustomerInput {
  const field = (name: string, caption: string) => text(fields[name], caption, `customer.${name}`, errors);
  const firstName = field('first_name', 'First name');
  const lastName = field('last_name', 'Last name');
  const email = field('email', 'Email address');
  const reference = field('reference', 'Reference');
  const organization = field('organization', 'Organization');
  const phone = field('phone', 'Phone');
  const address: { -readonly [K in keyof AddressFields]?: string } = {};
  for (const [name, key] of ADDRESS_FIELDS) {
    const value = field(name, `Customer ${name.replace('_', ' ')}`);
    if (value !== undefined) address[key] = value;
  }
  return {
    ...(firstName === undefined ? {} : { firstName }),
    ...(lastName === undefined ? {} : { lastName }),
    ...(email === undefined ? {} : { email }),
    ...(reference === undefined ? {} : { reference }),
    ...(organization === undefined ? {} : { organization }),
    ...(phone === undefined ? {} : { phone }),
    ...(Object.keys(address).length === 0 ? {} : { address }),
  };
}

/** A card from `payment_profile[...]`; a missing number or expiry is passed on blank for the engine to report. */
function cardInput(fields: FormParams, errors: ValidationCollector): CreditCardInput {
  const field = (name: string, caption: string) => text(fields[name], caption, `payment_profile.${name}`, errors);
  const cvv = field('cvv', 'CVV');
  const firstName = field('first_name', 'First name');
  const lastName = field('last_name', 'Last name');
  return {
    fullNumber: field('card_number', 'Credit card number') ?? '',
    expirationMonth: field('expiration_month', 'Credit card expiration month') ?? '',
    expirationYear: field('expiration_year', 'Credit card expiration year') ?? '',
    ...(cvv === undefined || cvv === '' ? {} : { cvv }),
    ...(firstName === undefined || firstName === '' ? {} : { firstName }),
    ...(lastName === undefined || lastName === '' ? {} : { lastName }),
  };
}

/** `payment_profile[...]` of a card update: the whole card plus an optional billing address. */
function cardUpdateInput(params: FormParams): Parameters<SubscriptionService['updateCard']>[2] {
  const errors = new ValidationCollector();
  const fields = asParams(params.payment_profile);
  const card = cardInput(fields, errors);
  const address: { -readonly [K in keyof AddressFields]?: string } = {};
  for (const [name, key] of ADDRESS_FIELDS) {
    const value = text(
      fields[`billing_${name}`],
      `Billing ${name.replace('_', ' ')}`,
      `payment_profile.billing_${name}`,
      errors,
    );
    if (value !== undefined) address[key] = value;
  }
  errors.throwIfAny();
  return Object.keys(address).length === 0 ? card : { ...card, billingAddress: address };
}

/**
 * The subscription a card update may change: the path's id, which must equal the signed
 * `subscription_id`. A missing one is a validation error (the merchant's form is
 * wrong); a different one is `unauthorized`, because the signature authorises another subscription.
 */
function cardUpdateTarget(pathId: string, signed: FormValue | undefined): number {
  if (signed === undefined || signed === '') {
    throw invalid('Subscription: subscription_id must be given in secure data.', 'subscription_id');
  }
  if (typeof signed !== 'string' || signed.trim() !== pathId.trim()) {
    throw new BillingError('unauthorized', 'Subscription: the signed subscription_id does not match the request.', {
      details: [
        {
          message: 'Subscription: the signed subscription_id does not match the request.',
          attribute: 'subscription_id',
        },
      ],
    });
  }
  const id = /^\d+$/.test(pathId.trim()) ? Number(pathId.trim()) : Number.NaN;
  if (!Number.isSafeInteger(id) || id < 1) throw notFound('Subscription', pathId);
  return id;
}
