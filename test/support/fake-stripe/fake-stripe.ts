import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import qs from 'qs';
import type Stripe from 'stripe';
import published from './fixtures.json' with { type: 'json' };

/**
 * A local server speaking the subset of Stripe's REST API the Stripe gateway uses: Customers,
 * PaymentMethods (retrieve, create, attach), PaymentIntents (create, retrieve, search) and Refunds,
 * with Stripe's idempotency (the same key and parameters replay the first answer; other parameters
 * get Stripe's 400 `idempotency_error`). Every object it answers with starts from Stripe's published
 * fixture of that object (`fixtures.json`, extracted from github.com/stripe/openapi) and is checked
 * against that fixture's fields before it is sent (`drift` lists any mismatch), so the fake cannot
 * drift from the real shapes; the objects are also typed with the `stripe` package's types, which
 * are generated from the same OpenAPI document. Every answer it sends is logged (`responses`), and
 * `test/gateways/fake-stripe-schema.test.ts` validates those of a gateway contract run against
 * Stripe's OpenAPI schemas (`schemas.json`, cut from spec3.json by `extract-schemas.mjs`).
 */
export interface FakeStripe {
  /** Settings for `new Stripe(key, config)` that point the real client here. */
  readonly stripeConfig: Stripe.StripeConfig;
  readonly port: number;
  /** Every request received, in order, with its raw body as it came over the wire. */
  readonly requests: readonly LoggedRequest[];
  /** Every answer sent, in order (a dropped connection sends none): checked against Stripe's schema by a test. */
  readonly responses: readonly LoggedResponse[];
  /** PaymentIntents by id. */
  readonly paymentIntents: ReadonlyMap<string, Stripe.PaymentIntent>;
  /** Refunds by id. */
  readonly refunds: ReadonlyMap<string, Stripe.Refund>;
  /** Customers by id. */
  readonly customers: ReadonlyMap<string, Stripe.Customer>;
  /** Responses whose shape differs from Stripe's fixture (should stay empty). */
  readonly drift: readonly string[];
  /** Answers the next matching requests with an error before doing anything (not saved for idempotency). */
  failNext(fault: { route: RegExp; status: 429 | 500 | 503; times?: number }): void;
  /** Executes the next matching requests, then closes the connection without answering (a lost answer). */
  dropAfterExecuting(fault: { route: RegExp; times?: number }): void;
  /** Closes the connection of the next matching requests before doing anything (nothing happened). */
  dropBeforeExecuting(fault: { route: RegExp; times?: number }): void;
  /** Executes the next matching requests and answers only after `ms` (for client timeouts). */
  delayNext(fault: { route: RegExp; ms: number; times?: number }): void;
  /** Forgets every fault not yet used. */
  clearFaults(): void;
  /**
   * Decides the fate of each request from the request itself (its route, idempotency key and
   * parameters), before the faults above: for faults chosen by key rather than by call order, and
   * for the crash tests, which kill the client process while its request is in flight.
   */
  intercept(interceptor: Interceptor | undefined): void;
  /** Hides objects created from now on from Search until {@link FakeStripe.indexSearch} (Search lags at Stripe). */
  pauseSearchIndexing(): void;
  /** Makes every object created so far searchable. */
  indexSearch(): void;
  close(): Promise<void>;
}

export interface LoggedResponse {
  /** `METHOD /path` of the request, for example `GET /v1/payment_intents/search`. */
  readonly route: string;
  readonly status: number;
  /** The JSON body as sent. */
  readonly body: string;
}

export interface LoggedRequest {
  readonly method: string;
  readonly path: string;
  readonly idempotencyKey: string | undefined;
  readonly body: string;
}

/** A request as an {@link Interceptor} sees it. */
export interface InterceptedRequest {
  /** `METHOD /path`, for example `POST /v1/payment_intents`. */
  readonly route: string;
  readonly idempotencyKey: string | undefined;
  /** The form body, parsed. */
  readonly params: Readonly<Record<string, unknown>>;
  /** The query string, parsed (Search's `query`). */
  readonly query: Readonly<Record<string, unknown>>;
}

/** What happens to one intercepted request; nothing set: it is served normally. */
export interface Interception {
  /** Answer with this error before doing anything (not saved for idempotency). */
  readonly fail?: 429 | 500 | 503;
  /** Close the connection before doing anything, or after executing (a lost answer). */
  readonly drop?: 'before' | 'after';
  /** Executed as a card the issuer declines (a new PaymentIntent only; a replay keeps its first answer). */
  readonly decline?: boolean;
  /** A Search answered as if nothing were indexed yet (Search lags at Stripe). */
  readonly unindexed?: boolean;
  /** Awaited just before the connection is closed by `drop`. */
  readonly beforeDrop?: () => Promise<void>;
}

export type Interceptor = (request: InterceptedRequest) => Interception | undefined | Promise<Interception | undefined>;

interface Fault {
  readonly route: RegExp;
  readonly kind: 'fail' | 'drop' | 'drop-before' | 'delay';
  readonly status?: number;
  readonly ms?: number;
  left: number;
}

/** What a test card does when charged. */
type CardBehaviour = 'ok' | 'declined' | 'insufficient_funds' | 'expired_card' | 'processing_error' | 'authentication';

interface TestCard {
  readonly brand: string;
  readonly last4: string;
  readonly behaviour: CardBehaviour;
  /** Attaching checks the card with the issuer, so a card that declines everything cannot be attached. */
  readonly failsAttach?: boolean;
}

/** Stripe's test PaymentMethod ids (docs.stripe.com/testing) and the test numbers behind them. */
const TEST_PAYMENT_METHODS: Readonly<Record<string, TestCard>> = {
  pm_card_visa: { brand: 'visa', last4: '4242', behaviour: 'ok' },
  pm_card_mastercard: { brand: 'mastercard', last4: '4444', behaviour: 'ok' },
  pm_card_amex: { brand: 'amex', last4: '8431', behaviour: 'ok' },
  pm_card_chargeDeclined: { brand: 'visa', last4: '0002', behaviour: 'declined', failsAttach: true },
  pm_card_chargeDeclinedInsufficientFunds: {
    brand: 'visa',
    last4: '9995',
    behaviour: 'insufficient_funds',
    failsAttach: true,
  },
  pm_card_chargeDeclinedExpiredCard: { brand: 'visa', last4: '0069', behaviour: 'expired_card', failsAttach: true },
  pm_card_chargeDeclinedProcessingError: { brand: 'visa', last4: '0119', behaviour: 'processing_error' },
  pm_card_authenticationRequired: { brand: 'visa', last4: '3184', behaviour: 'authentication' },
  // Attaches to a customer, then every charge is declined: a card that goes bad after signup.
  pm_card_chargeCustomerFail: { brand: 'visa', last4: '0341', behaviour: 'declined' },
};

/** Stripe's test card numbers, for PaymentMethods created from a raw number (test mode only). */
const TEST_NUMBERS: Readonly<Record<string, TestCard>> = {
  '4242424242424242': TEST_PAYMENT_METHODS.pm_card_visa!,
  '5555555555554444': TEST_PAYMENT_METHODS.pm_card_mastercard!,
  '4000000000000002': TEST_PAYMENT_METHODS.pm_card_chargeDeclined!,
  '4000000000000341': TEST_PAYMENT_METHODS.pm_card_chargeCustomerFail!,
  '4000002760003184': TEST_PAYMENT_METHODS.pm_card_authenticationRequired!,
};

const DECLINES: Readonly<Record<Exclude<CardBehaviour, 'ok'>, { code: string; decline?: string; message: string }>> = {
  declined: { code: 'card_declined', decline: 'generic_decline', message: 'Your card was declined.' },
  insufficient_funds: {
    code: 'card_declined',
    decline: 'insufficient_funds',
    message: 'Your card has insufficient funds.',
  },
  expired_card: { code: 'expired_card', message: 'Your card has expired.' },
  processing_error: {
    code: 'processing_error',
    message: 'An error occurred while processing your card. Try again in a little bit.',
  },
  authentication: {
    code: 'authentication_required',
    decline: 'authentication_required',
    message: 'Your card was declined. This transaction requires authentication.',
  },
};

class StripeFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(String(body.message));
  }
}

const invalidRequest = (message: string, extra: Record<string, unknown> = {}, status = 400) =>
  new StripeFailure(status, { type: 'invalid_request_error', message, ...extra });
const missing = (what: string, id: string, param: string) =>
  invalidRequest(`No such ${what}: '${id}'`, { code: 'resource_missing', param }, 404);

/** Stripe's card error for a test card that refuses (the body of a 402). */
function cardFailure(card: TestCard, method: Stripe.PaymentMethod): StripeFailure {
  const decline = DECLINES[card.behaviour === 'ok' ? 'declined' : card.behaviour];
  return new StripeFailure(402, {
    type: 'card_error',
    code: decline.code,
    ...(decline.decline === undefined ? {} : { decline_code: decline.decline }),
    message: decline.message,
    payment_method: method,
  });
}

/** Starts the fake on a free local port. */
export async function startFakeStripe(): Promise<FakeStripe> {
  const requests: LoggedRequest[] = [];
  const responses: LoggedResponse[] = [];
  const drift: string[] = [];
  const faults: Fault[] = [];
  const customers = new Map<string, Stripe.Customer>();
  const paymentMethods = new Map<string, Stripe.PaymentMethod>();
  const cardOf = new Map<string, TestCard>();
  const paymentIntents = new Map<string, Stripe.PaymentIntent>();
  const refunds = new Map<string, Stripe.Refund>();
  const idempotent = new Map<string, { params: unknown; route: string; status: number; body: string }>();
  const searchable = new Set<string>();
  let indexing = true;
  let interceptor: Interceptor | undefined;
  /** Set while a request the interceptor declines (or blinds Search for) is executed. */
  let declining = false;
  let unindexed = false;
  let sequence = 0;
  const newId = (prefix: string) => `${prefix}_fake${String(++sequence).padStart(14, '0')}`;
  const created = () => 1_767_225_600 + sequence;

  const fixture = <T>(name: keyof typeof published.resources): T =>
    structuredClone(published.resources[name]) as unknown as T;

  function checked<T extends { object: string }>(value: T): T {
    const name = value.object as keyof typeof published.resources;
    const reference = published.resources[name] as Record<string, unknown> | undefined;
    if (reference === undefined) return value;
    const actual = value as unknown as Record<string, unknown>;
    for (const key of Object.keys(reference))
      if (!(key in actual)) drift.push(`${value.object} ${String(actual.id)} lacks ${key}`);
    for (const key of Object.keys(actual)) {
      if (!(key in reference)) drift.push(`${value.object} ${String(actual.id)} has ${key}, unknown to Stripe`);
      else if (actual[key] !== null && reference[key] !== null && typeof actual[key] !== typeof reference[key])
        drift.push(`${value.object}.${key} is ${typeof actual[key]}, Stripe's is ${typeof reference[key]}`);
    }
    return value;
  }

  function paymentMethodFor(id: string, card: TestCard, customer: string | null): Stripe.PaymentMethod {
    const method = fixture<Stripe.PaymentMethod>('payment_method');
    method.id = id;
    method.created = created();
    method.customer = customer;
    method.metadata = {};
    method.billing_details = {
      address: { city: null, country: null, line1: null, line2: null, postal_code: null, state: null },
      email: null,
      name: null,
      phone: null,
      tax_id: null,
    };
    const base = method.card!;
    method.card = {
      ...base,
      brand: card.brand,
      display_brand: card.brand,
      last4: card.last4,
      exp_month: 12,
      exp_year: 2034,
      fingerprint: `fp${card.last4}`,
      generated_from: null,
      wallet: null,
      networks: { available: [card.brand], preferred: null },
    };
    cardOf.set(id, card);
    return method;
  }

  /** A stored PaymentMethod, or a fresh unattached one for a test id (as Stripe's test ids behave). */
  function findPaymentMethod(id: string, param: string): Stripe.PaymentMethod {
    const stored = paymentMethods.get(id);
    if (stored) return stored;
    const test = TEST_PAYMENT_METHODS[id];
    if (test) return paymentMethodFor(id, test, null);
    throw missing('PaymentMethod', id, param);
  }

  function createCustomer(params: Record<string, unknown>): Stripe.Customer {
    const customer = fixture<Stripe.Customer>('customer');
    customer.id = newId('cus');
    customer.created = created();
    customer.discount = null;
    customer.shipping = null;
    customer.currency = null;
    customer.email = typeof params.email === 'string' ? params.email : null;
    customer.name = typeof params.name === 'string' ? params.name : null;
    customer.metadata = (params.metadata as Record<string, string> | undefined) ?? {};
    customers.set(customer.id, customer);
    return customer;
  }

  function createPaymentMethod(params: Record<string, unknown>): Stripe.PaymentMethod {
    const card = params.card as Record<string, string> | undefined;
    if (params.type !== 'card' || card?.number === undefined)
      throw invalidRequest('Missing required param: card[number].', { param: 'card[number]' });
    const test = TEST_NUMBERS[card.number];
    if (!test)
      throw new StripeFailure(402, {
        type: 'card_error',
        code: 'incorrect_number',
        message: 'Your card number is incorrect.',
      });
    const method = paymentMethodFor(newId('pm'), test, null);
    paymentMethods.set(method.id, method);
    return method;
  }

  function attach(id: string, params: Record<string, unknown>): Stripe.PaymentMethod {
    const customer = String(params.customer ?? '');
    if (!customers.has(customer)) throw missing('customer', customer, 'customer');
    const found = findPaymentMethod(id, 'payment_method');
    const test = TEST_PAYMENT_METHODS[id];
    const card = cardOf.get(found.id);
    if (card?.failsAttach) throw cardFailure(card, found);
    // Attaching a test id makes a new PaymentMethod, as at Stripe; a real one is attached in place.
    const method = test ? paymentMethodFor(newId('pm'), test, customer) : found;
    if (method.customer !== null && method.customer !== customer)
      throw invalidRequest('The payment method you provided has already been attached to a customer.', {
        code: 'payment_method_unexpected_state',
      });
    method.customer = customer;
    paymentMethods.set(method.id, method);
    return method;
  }

  function createPaymentIntent(params: Record<string, unknown>): Stripe.PaymentIntent {
    const amount = Number(params.amount);
    if (!/^\d+$/.test(String(params.amount)) || amount < 1)
      throw invalidRequest('Invalid positive integer', { param: 'amount' });
    if (typeof params.currency !== 'string' || !/^[a-z]{3}$/.test(params.currency))
      throw invalidRequest('Invalid currency', { param: 'currency' });
    const customer = params.customer === undefined ? null : String(params.customer);
    if (customer !== null && !customers.has(customer)) throw missing('customer', customer, 'customer');
    const methodId = String(params.payment_method ?? '');
    const method = findPaymentMethod(methodId, 'payment_method');
    if (customer !== null && !TEST_PAYMENT_METHODS[methodId] && method.customer !== customer)
      throw invalidRequest(`The provided PaymentMethod ${methodId} does not belong to the customer ${customer}.`, {
        param: 'payment_method',
      });
    const intent = fixture<Stripe.PaymentIntent>('payment_intent');
    intent.id = newId('pi');
    intent.client_secret = `${intent.id}_secret_fake`;
    intent.created = created();
    intent.amount = amount;
    intent.currency = params.currency;
    intent.customer = customer;
    intent.description = typeof params.description === 'string' ? params.description : null;
    intent.metadata = (params.metadata as Record<string, string> | undefined) ?? {};
    intent.payment_method = method.id;
    intent.canceled_at = null;
    intent.next_action = null;
    intent.processing = null;
    intent.shipping = null;
    intent.transfer_data = null;
    intent.payment_method_configuration_details = null;
    intent.last_payment_error = null;
    intent.setup_future_usage = null;
    const redirects = (params.automatic_payment_methods as { allow_redirects?: string } | undefined)?.allow_redirects;
    intent.automatic_payment_methods = {
      enabled: true,
      ...(redirects === 'never' ? { allow_redirects: 'never' } : {}),
    };
    paymentIntents.set(intent.id, intent);
    if (indexing) searchable.add(intent.id);
    if (String(params.confirm) !== 'true') {
      intent.status = 'requires_confirmation';
      return checked(intent);
    }
    const card = declining ? TEST_PAYMENT_METHODS.pm_card_chargeDeclined! : cardOf.get(method.id);
    const behaviour = card?.behaviour ?? 'ok';
    if (behaviour === 'authentication' && String(params.off_session) !== 'true') {
      intent.status = 'requires_action';
      intent.next_action = { type: 'use_stripe_sdk', use_stripe_sdk: {} };
      return checked(intent);
    }
    if (behaviour !== 'ok') {
      const failure = cardFailure(card!, method);
      intent.status = 'requires_payment_method';
      intent.last_payment_error = failure.body as unknown as Stripe.PaymentIntent.LastPaymentError;
      throw new StripeFailure(402, { ...failure.body, payment_intent: checked(intent) });
    }
    intent.status = 'succeeded';
    intent.amount_received = amount;
    intent.latest_charge = newId('ch');
    return checked(intent);
  }

  function createRefund(params: Record<string, unknown>): Stripe.Refund {
    const id = String(params.payment_intent ?? '');
    const intent = paymentIntents.get(id);
    if (!intent) throw missing('payment_intent', id, 'payment_intent');
    if (intent.status !== 'succeeded')
      throw invalidRequest(`This PaymentIntent (${id}) does not have a successful charge to refund.`, {
        code: 'charge_not_refundable',
      });
    const already = [...refunds.values()]
      .filter((r) => r.payment_intent === id && r.status !== 'failed')
      .reduce((sum, r) => sum + r.amount, 0);
    const left = intent.amount_received - already;
    if (left === 0)
      throw invalidRequest(`Charge ${String(intent.latest_charge)} has already been refunded.`, {
        code: 'charge_already_refunded',
      });
    const amount = params.amount === undefined ? left : Number(params.amount);
    if (!Number.isSafeInteger(amount) || amount < 1)
      throw invalidRequest('Invalid positive integer', { param: 'amount' });
    if (amount > left)
      throw invalidRequest(`Refund amount (${amount}) is greater than unrefunded amount on charge (${left})`, {
        param: 'amount',
      });
    const refund = fixture<Stripe.Refund>('refund');
    refund.id = newId('re');
    refund.created = created();
    refund.amount = amount;
    refund.currency = intent.currency;
    refund.charge = intent.latest_charge as string;
    refund.payment_intent = id;
    refund.metadata = (params.metadata as Record<string, string> | undefined) ?? {};
    refund.status = 'succeeded';
    refunds.set(refund.id, refund);
    return checked(refund);
  }

  function search(query: string): Stripe.ApiSearchResult<Stripe.PaymentIntent> {
    const clause = /^metadata\['([^'\\]+)'\]:'((?:[^'\\]|\\.)*)'$/.exec(query.trim());
    if (!clause) throw invalidRequest(`The fake supports only metadata['key']:'value' queries, not ${query}`);
    const [, key, value] = clause;
    const wanted = value!.replace(/\\(.)/g, '$1');
    const data = [...paymentIntents.values()].filter(
      (i) => !unindexed && searchable.has(i.id) && i.metadata[key!] === wanted,
    );
    return {
      object: 'search_result',
      data: data.map(checked),
      has_more: false,
      next_page: null,
      url: '/v1/payment_intents/search',
    } as Stripe.ApiSearchResult<Stripe.PaymentIntent>;
  }

  function route(method: string, path: string, params: Record<string, unknown>, query: string): unknown {
    const [, resource, id, action] = /^\/v1\/([a-z_]+)(?:\/([^/]+))?(?:\/([a-z_]+))?$/.exec(path) ?? [];
    const target = id === undefined ? undefined : decodeURIComponent(id);
    const name = `${method} ${resource ?? ''}${target === undefined ? '' : '/:id'}${action === undefined ? '' : `/${action}`}`;
    switch (name) {
      case 'POST customers':
        return checked(createCustomer(params));
      case 'POST payment_methods':
        return checked(createPaymentMethod(params));
      case 'GET payment_methods/:id':
        return checked(findPaymentMethod(target!, 'payment_method'));
      case 'POST payment_methods/:id/attach':
        return checked(attach(target!, params));
      case 'POST payment_intents':
        return createPaymentIntent(params);
      case 'GET payment_intents/:id': {
        if (target === 'search') return search(String(qs.parse(query).query ?? ''));
        const intent = paymentIntents.get(target!);
        if (!intent) throw missing('payment_intent', target!, 'intent');
        return checked(intent);
      }
      case 'POST refunds':
        return createRefund(params);
      default:
        throw invalidRequest(`Unrecognized request URL (${method}: ${path}).`, {}, 404);
    }
  }

  function takeFault(routeName: string): Fault | undefined {
    const fault = faults.find((f) => f.left > 0 && f.route.test(routeName));
    if (fault) fault.left -= 1;
    return fault;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://fake-stripe');
    const method = req.method ?? 'GET';
    const routeName = `${method} ${url.pathname}`;
    const header = req.headers['idempotency-key'];
    const idempotencyKey = typeof header === 'string' ? header : undefined;
    requests.push({ method, path: `${url.pathname}${url.search}`, idempotencyKey, body });
    const send = (status: number, payload: string, replayed = false) => {
      responses.push({ route: routeName, status, body: payload });
      res.writeHead(status, {
        'content-type': 'application/json',
        'request-id': `req_fake${requests.length}`,
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
        ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
        // A saved answer never changes: the client must not retry it.
        'stripe-should-retry': 'false',
      });
      res.end(payload);
    };
    const authorization = req.headers.authorization ?? '';
    if (!/^Bearer (sk|rk)_(test|live)_\w+$/.test(authorization)) {
      send(401, JSON.stringify({ error: { type: 'invalid_request_error', message: 'Invalid API Key provided.' } }));
      return;
    }
    const params = qs.parse(body, { depth: 10 }) as Record<string, unknown>;
    const intercepted =
      interceptor === undefined
        ? undefined
        : await interceptor({
            route: routeName,
            idempotencyKey,
            params,
            query: qs.parse(url.search.slice(1)) as Record<string, unknown>,
          });
    const fault: Pick<Fault, 'kind' | 'status' | 'ms'> | undefined =
      intercepted?.fail !== undefined
        ? { kind: 'fail', status: intercepted.fail }
        : intercepted?.drop !== undefined
          ? { kind: intercepted.drop === 'before' ? 'drop-before' : 'drop' }
          : takeFault(routeName);
    const drop = async () => {
      await intercepted?.beforeDrop?.();
      req.socket.destroy();
    };
    if (fault?.kind === 'fail') {
      const type = fault.status === 429 ? 'invalid_request_error' : 'api_error';
      const code = fault.status === 429 ? { code: 'rate_limit' } : {};
      send(
        fault.status!,
        JSON.stringify({ error: { type, ...code, message: `Fake Stripe: injected ${fault.status}.` } }),
      );
      return;
    }
    if (fault?.kind === 'drop-before') {
      await drop();
      return;
    }
    let status = 200;
    let payload: string;
    const saved = idempotencyKey === undefined ? undefined : idempotent.get(idempotencyKey);
    if (saved !== undefined && method === 'POST') {
      if (saved.route !== routeName || !isDeepStrictEqual(saved.params, params)) {
        send(
          400,
          JSON.stringify({
            error: {
              type: 'idempotency_error',
              message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
            },
          }),
        );
        return;
      }
      if (fault?.kind === 'drop') await drop();
      else send(saved.status, saved.body, true);
      return;
    }
    try {
      declining = intercepted?.decline === true;
      unindexed = intercepted?.unindexed === true;
      payload = JSON.stringify(route(method, url.pathname, params, url.search.slice(1)));
    } catch (error) {
      if (!(error instanceof StripeFailure)) throw error;
      status = error.status;
      payload = JSON.stringify({ error: error.body });
    } finally {
      declining = false;
      unindexed = false;
    }
    // Stripe saves the answer of every request that began executing, failures included.
    if (idempotencyKey !== undefined && method === 'POST')
      idempotent.set(idempotencyKey, { params, route: routeName, status, body: payload });
    if (fault?.kind === 'drop') {
      await drop();
      return;
    }
    if (fault?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.ms));
    if (!res.destroyed) send(status, payload);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      drift.push(`fake crashed: ${error instanceof Error ? error.stack : String(error)}`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    stripeConfig: { host: '127.0.0.1', port, protocol: 'http' },
    requests,
    responses,
    paymentIntents,
    refunds,
    customers,
    drift,
    failNext: ({ route: r, status, times }) => faults.push({ route: r, kind: 'fail', status, left: times ?? 1 }),
    dropAfterExecuting: ({ route: r, times }) => faults.push({ route: r, kind: 'drop', left: times ?? 1 }),
    dropBeforeExecuting: ({ route: r, times }) => faults.push({ route: r, kind: 'drop-before', left: times ?? 1 }),
    delayNext: ({ route: r, ms, times }) => faults.push({ route: r, kind: 'delay', ms, left: times ?? 1 }),
    clearFaults() {
      faults.length = 0;
    },
    intercept(next) {
      interceptor = next;
    },
    pauseSearchIndexing() {
      indexing = false;
    },
    indexSearch() {
      indexing = true;
      for (const id of paymentIntents.keys()) searchable.add(id);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
