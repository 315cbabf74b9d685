import {
  type CardInput,
  type ChargeRequest,
  type ChargeResult,
  type Clock,
  type PaymentGateway,
  type RefundRequest,
  type RefundResult,
  systemClock,
  type TokenizeResult,
} from 'billing-engine';
import Stripe from 'stripe';

/** The `current_vault` names under which a vault import belongs to Stripe (the service's spellings). */
export const STRIPE_VAULT_NAMES: readonly string[] = Object.freeze(['stripe_connect', 'stripe']);

/** Options of {@link createStripeGateway}: a ready Stripe client, or an API key to build one. */
export interface StripeGatewayOptions {
  /** A Stripe client configured by the merchant (API version, proxy, retries, ...). */
  readonly client?: Stripe;
  /** A secret or restricted key (`sk_live_...`, `sk_test_...`, `rk_...`); used when `client` is absent. */
  readonly apiKey?: string;
  /** Extra settings for the client built from `apiKey` (`host`, `port`, `protocol`, `timeout`, ...). */
  readonly stripeConfig?: Stripe.StripeConfig;
  /** The name shown as `current_vault` and `gateway_used`; default `stripe_connect`, the service's spelling. */
  readonly name?: string;
  /**
   * Prefixes every Idempotency-Key and the metadata key the engine's payments are found by (default
   * `billing-engine`). Give each database that shares one Stripe account its own value: the engine's
   * keys (`renewal:<subscription>:<period>`) are unique within one database only.
   */
  readonly idempotencyNamespace?: string;
  /**
   * Lets `tokenize` send a raw card number to Stripe. Refused unless `apiKey` is a test key
   * (`sk_test_`/`rk_test_`): live card numbers must never reach the merchant's servers.
   */
  readonly allowRawCardsInTestMode?: boolean;
  /** Metadata added to every PaymentIntent (for example the site's subdomain). */
  readonly metadata?: Readonly<Record<string, string>>;
  /**
   * How long after sending a charge a Search that finds nothing still means "not indexed yet"
   * rather than "never received" (Stripe's Search is eventually consistent); default 10 minutes.
   */
  readonly searchLagMs?: number;
  /** How many times a charge whose answer was lost is replayed at once with the same key; default 2. */
  readonly replayAttempts?: number;
  /** The clock that dates the charges sent (for {@link StripeGatewayOptions.searchLagMs}); default the wall clock. */
  readonly clock?: Clock;
}

/** A card attached at Stripe, in the shape of the engine's `payment_profile_attributes` import. */
export interface StripePaymentProfile {
  readonly current_vault: string;
  readonly vault_token: string;
  readonly customer_vault_token: string;
  readonly card_type: string;
  readonly last_four: string;
  readonly expiration_month: number;
  readonly expiration_year: number;
}

/** The Stripe gateway: the port plus attaching a Stripe.js PaymentMethod for a vault import. */
export interface StripeGateway extends PaymentGateway {
  /** The Stripe client in use. */
  readonly client: Stripe;
  /** The `current_vault` names whose tokens this gateway charges: its name and {@link STRIPE_VAULT_NAMES}. */
  readonly vaultNames: readonly string[];
  /** Whether a value given as a card number is a PaymentMethod id (`pm_...`) to attach instead. */
  isCardToken(value: string): boolean;
  /**
   * Attaches a PaymentMethod created client-side by Stripe.js to a Stripe Customer (an existing one,
   * or one created now) and returns it as `payment_profile_attributes` for a signup.
   */
  attachPaymentMethod(
    paymentMethodId: string,
    customer?: { readonly id?: string; readonly email?: string; readonly name?: string },
  ): Promise<StripePaymentProfile>;
}

/** Connection errors that prove the request never left this machine, so nothing can have been charged. */
const NEVER_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

/** The metadata key a PaymentIntent carries the engine's idempotency key under (found by Search). */
const KEY_METADATA = 'billing_engine_key';

/** Stripe's card brands in the service's `card_type` spelling. */
const CARD_TYPES: Readonly<Record<string, string>> = {
  visa: 'visa',
  mastercard: 'master',
  amex: 'american_express',
  discover: 'discover',
  diners: 'diners_club',
  jcb: 'jcb',
  unionpay: 'unionpay',
  cartes_bancaires: 'cartes_bancaires',
};

/** A charge whose answer was lost: the PaymentIntent may exist at Stripe. */
class LostAnswer extends Error {}

/**
 * Creates the Stripe gateway. Charges are off-session, confirmed PaymentIntents whose
 * Idempotency-Key is the engine's deterministic key (namespaced), so a replay never charges twice;
 * `lookup` finds a PaymentIntent by that key through Search on its metadata.
 */
export function createStripeGateway(options: StripeGatewayOptions): StripeGateway {
  const client = options.client ?? clientFromKey(options);
  const name = options.name ?? 'stripe_connect';
  const namespace = options.idempotencyNamespace ?? 'billing-engine';
  if (namespace.trim() === '' || namespace.includes("'"))
    throw new TypeError('createStripeGateway: idempotencyNamespace must be non-blank and contain no quote.');
  const rawCardsAllowed =
    options.allowRawCardsInTestMode === true && options.apiKey !== undefined && /^(sk|rk)_test_/.test(options.apiKey);
  if (options.allowRawCardsInTestMode === true && !rawCardsAllowed)
    throw new TypeError(
      'createStripeGateway: allowRawCardsInTestMode needs apiKey to be a test key (sk_test_... or rk_test_...).',
    );
  const searchLagMs = options.searchLagMs ?? 10 * 60_000;
  const replayAttempts = options.replayAttempts ?? 2;
  const clock = options.clock ?? systemClock;
  /** When this process last sent each charge key, so a Search that lags is not read as "never received". */
  const sentAt = new Map<string, number>();
  const stripeKey = (key: string) => `${namespace}:${key}`;
  /** Notes when a charge key is sent; keys past the Search lag are forgotten, so the map stays small. */
  const remember = (key: string) => {
    const now = clock.now().getTime();
    sentAt.delete(key);
    for (const [old, at] of sentAt) {
      if (now - at < searchLagMs) break;
      sentAt.delete(old);
    }
    sentAt.set(key, now);
  };

  async function attach(
    paymentMethodId: string,
    customer: { readonly id?: string; readonly email?: string; readonly name?: string } = {},
  ): Promise<{ paymentMethod: Stripe.PaymentMethod; customerId: string }> {
    const found = await client.paymentMethods.retrieve(paymentMethodId);
    const owner = idOf(found.customer);
    if (owner !== null) {
      if (customer.id !== undefined && customer.id !== owner)
        throw new StripeGatewayRefusal('The payment method belongs to another Stripe customer.');
      return { paymentMethod: found, customerId: owner };
    }
    // Keyed by the payment method, so a retried attach never creates a second customer.
    const customerId =
      customer.id ??
      (
        await client.customers.create(
          {
            ...(customer.email === undefined ? {} : { email: customer.email }),
            ...(customer.name === undefined ? {} : { name: customer.name }),
            metadata: { billing_engine: namespace },
          },
          { idempotencyKey: stripeKey(`customer:${paymentMethodId}`) },
        )
      ).id;
    const attached = await client.paymentMethods.attach(
      paymentMethodId,
      { customer: customerId },
      { idempotencyKey: stripeKey(`attach:${paymentMethodId}:${customerId}`) },
    );
    return { paymentMethod: attached, customerId };
  }

  async function tokenize(card: CardInput): Promise<TokenizeResult> {
    const given = card.fullNumber.trim();
    try {
      let paymentMethodId = given;
      if (!given.startsWith('pm_')) {
        if (!rawCardsAllowed) {
          return {
            ok: false,
            message:
              'Credit card number: Stripe takes cards from Stripe.js only; send the PaymentMethod id (pm_...) instead of the number.',
          };
        }
        const created = await client.paymentMethods.create({
          type: 'card',
          card: {
            number: given.replace(/[\s-]/g, ''),
            exp_month: card.expirationMonth,
            exp_year: card.expirationYear,
            ...(card.cvv === undefined ? {} : { cvc: card.cvv }),
          },
        });
        paymentMethodId = created.id;
      }
      const name = [card.firstName, card.lastName].filter(Boolean).join(' ');
      const { paymentMethod, customerId } = await attach(paymentMethodId, {
        ...(card.customerVaultToken === undefined ? {} : { id: card.customerVaultToken }),
        ...(name === '' ? {} : { name }),
      });
      return {
        ok: true,
        vaultToken: paymentMethod.id,
        customerVaultToken: customerId,
        cardType: cardTypeOf(paymentMethod),
        lastFour: paymentMethod.card?.last4 ?? '',
      };
    } catch (error) {
      if (error instanceof StripeGatewayRefusal) return { ok: false, message: `Credit card: ${error.message}` };
      if (error instanceof Stripe.errors.StripeCardError || error instanceof Stripe.errors.StripeInvalidRequestError)
        return { ok: false, message: `Credit card: ${error.message}` };
      throw error;
    }
  }

  /** The customer and payment method to charge: an import without a customer is attached first. */
  async function payer(request: ChargeRequest): Promise<{ customer: string; paymentMethod: string }> {
    if (request.customerVaultToken !== null)
      return { customer: request.customerVaultToken, paymentMethod: request.vaultToken };
    const { paymentMethod, customerId } = await attach(request.vaultToken);
    return { customer: customerId, paymentMethod: paymentMethod.id };
  }

  async function createIntent(request: ChargeRequest, who: { customer: string; paymentMethod: string }) {
    const params: Stripe.PaymentIntentCreateParams = {
      amount: request.amountInCents,
      currency: request.currency.toLowerCase(),
      customer: who.customer,
      payment_method: who.paymentMethod,
      off_session: true,
      confirm: true,
      // Server-side confirmation has no page to return to: only methods that never redirect.
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
      description: request.description,
      metadata: { ...options.metadata, ...keyMetadata(stripeKey(request.idempotencyKey)) },
    };
    // The same key and the same parameters: Stripe answers a replay with the first answer.
    const settings = { idempotencyKey: stripeKey(request.idempotencyKey), maxNetworkRetries: 0 };
    let possiblySent = false;
    for (let attempt = 0; ; attempt++) {
      try {
        remember(request.idempotencyKey);
        return await client.paymentIntents.create(params, settings);
      } catch (error) {
        if (!(error instanceof Stripe.errors.StripeConnectionError)) throw error;
        if (!NEVER_SENT_CODES.has(connectionCode(error))) possiblySent = true;
        if (attempt >= replayAttempts) throw possiblySent ? new LostAnswer(error.message) : error;
      }
    }
  }

  async function charge(request: ChargeRequest): Promise<ChargeResult> {
    if (!Number.isSafeInteger(request.amountInCents) || request.amountInCents <= 0)
      return { outcome: 'error', message: 'Stripe: the amount must be a positive whole number of minor units.' };
    let who: { customer: string; paymentMethod: string };
    try {
      who = await payer(request);
    } catch (error) {
      // Nothing was charged yet: even a lost answer here is a plain, retryable error.
      const mapped = chargeOutcomeOf(error);
      return mapped.outcome === 'unknown' ? { outcome: 'error', message: mapped.message } : mapped;
    }
    try {
      return intentOutcome(await createIntent(request, who));
    } catch (error) {
      if (error instanceof Stripe.errors.StripeIdempotencyError && error.statusCode === 400) {
        // This key was used with other parameters (the card changed since): the first request decides.
        const earlier = await lookup(request.idempotencyKey).catch(() => undefined);
        return (
          earlier ?? {
            outcome: 'unknown',
            message: `Stripe: this payment was already requested with other details (${error.message})`,
          }
        );
      }
      return chargeOutcomeOf(error);
    }
  }

  async function lookup(idempotencyKey: string): Promise<ChargeResult | undefined> {
    const value = stripeKey(idempotencyKey).replace(/\\/g, '\\\\');
    const found = await client.paymentIntents.search({ query: `metadata['${KEY_METADATA}']:'${value}'`, limit: 10 });
    const intents = found.data;
    const best = intents.find((i) => i.status === 'succeeded') ?? intents[0];
    if (best !== undefined) return intentOutcome(best);
    const sent = sentAt.get(idempotencyKey);
    if (sent !== undefined && clock.now().getTime() - sent < searchLagMs) {
      // Search is eventually consistent: a PaymentIntent made moments ago may not be indexed yet.
      throw new Error('Stripe: the payment is not searchable yet; ask again later.');
    }
    return undefined;
  }

  async function refund(request: RefundRequest): Promise<RefundResult> {
    if (!Number.isSafeInteger(request.amountInCents) || request.amountInCents <= 0)
      return { outcome: 'failure', message: 'Stripe: the refund must be a positive whole number of minor units.' };
    try {
      const created = await client.refunds.create(
        {
          payment_intent: request.chargeTransactionId,
          amount: request.amountInCents,
          metadata: { ...options.metadata, ...keyMetadata(stripeKey(request.idempotencyKey)) },
        },
        { idempotencyKey: stripeKey(request.idempotencyKey) },
      );
      if (created.status === 'failed' || created.status === 'canceled')
        return {
          outcome: 'failure',
          message: `Stripe: the refund ${created.status} (${created.failure_reason ?? 'no reason given'}).`,
        };
      return { outcome: 'success', transactionId: created.id };
    } catch (error) {
      // Refused by Stripe (over the charge, already refunded, unknown payment): a final answer.
      if (
        error instanceof Stripe.errors.StripeInvalidRequestError ||
        error instanceof Stripe.errors.StripeCardError ||
        (error instanceof Stripe.errors.StripeIdempotencyError && error.statusCode === 400)
      )
        return { outcome: 'failure', message: `Stripe: ${error.message}` };
      // No answer, a 5xx, a rate limit or bad credentials: thrown, so the engine resends it with its key later.
      throw error;
    }
  }

  return {
    name,
    // An import whose `current_vault` names another gateway (`braintree_blue`) is refused by the
    // engine: its token could never be charged here.
    vaultNames: Object.freeze([...new Set([name, ...STRIPE_VAULT_NAMES])]),
    // A PaymentMethod id from Stripe.js stands where a card number goes (signup, card update,
    // payment profile): `tokenize` attaches it instead of creating one from a number.
    isCardToken: (value: string) => PAYMENT_METHOD_ID.test(value),
    supportsRefunds: true,
    client,
    tokenize,
    charge,
    refund,
    lookup,
    async attachPaymentMethod(paymentMethodId, customer) {
      if (!PAYMENT_METHOD_ID.test(paymentMethodId))
        throw new TypeError('attachPaymentMethod: expected a PaymentMethod id (pm_...) from Stripe.js.');
      const { paymentMethod, customerId } = await attach(paymentMethodId, customer);
      return {
        current_vault: name,
        vault_token: paymentMethod.id,
        customer_vault_token: customerId,
        card_type: cardTypeOf(paymentMethod),
        last_four: paymentMethod.card?.last4 ?? '',
        expiration_month: paymentMethod.card?.exp_month ?? 0,
        expiration_year: paymentMethod.card?.exp_year ?? 0,
      };
    },
  };
}

/** A Stripe PaymentMethod id, as Stripe.js hands it to the page. */
const PAYMENT_METHOD_ID = /^pm_\w+$/;

/** A refusal decided here, before Stripe was asked. */
class StripeGatewayRefusal extends Error {}

function clientFromKey(options: StripeGatewayOptions): Stripe {
  if (options.apiKey === undefined || !/^(sk|rk)_(live|test)_\w+$/.test(options.apiKey))
    throw new TypeError('createStripeGateway: give a Stripe client, or apiKey as a secret or restricted key.');
  // The gateway resends a lost payment itself (`replayAttempts`, same idempotency key), so the
  // client's own network retries would only multiply the sends: off unless the merchant sets them.
  return new Stripe(options.apiKey, { maxNetworkRetries: 0, ...options.stripeConfig });
}

function keyMetadata(key: string): Record<string, string> {
  const [purpose, subscription] = key.split(':').slice(1);
  return {
    [KEY_METADATA]: key,
    ...(purpose === undefined ? {} : { billing_engine_purpose: purpose }),
    // Renewal, dunning, charge, allocation and migration keys name the subscription second.
    ...(subscription !== undefined && /^\d+$/.test(subscription) && purpose !== 'signup'
      ? { billing_engine_subscription: subscription }
      : {}),
  };
}

function idOf(value: string | { id: string } | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : value.id;
}

function cardTypeOf(paymentMethod: Stripe.PaymentMethod): string {
  return CARD_TYPES[paymentMethod.card?.brand ?? ''] ?? 'bogus';
}

function connectionCode(error: Stripe.errors.StripeConnectionError): string {
  const detail = (error as { detail?: unknown }).detail;
  return typeof detail === 'object' && detail !== null && 'code' in detail ? String(detail.code) : '';
}

/** Our outcome for a PaymentIntent Stripe answered with. */
function intentOutcome(intent: Stripe.PaymentIntent): ChargeResult {
  switch (intent.status) {
    case 'succeeded':
      return { outcome: 'success', transactionId: intent.id };
    case 'requires_action':
      return { outcome: 'declined', message: authenticationMessage };
    case 'processing':
      return { outcome: 'unknown', message: `Stripe: payment ${intent.id} is still processing.` };
    case 'requires_payment_method': {
      const failure = intent.last_payment_error;
      if (failure?.code === 'authentication_required') return { outcome: 'declined', message: authenticationMessage };
      return { outcome: 'declined', message: `Stripe: ${failure?.message ?? 'the payment method was refused.'}` };
    }
    case 'canceled':
      return { outcome: 'declined', message: `Stripe: payment ${intent.id} was canceled.` };
    default:
      return { outcome: 'error', message: `Stripe: payment ${intent.id} is in the unexpected state ${intent.status}.` };
  }
}

const authenticationMessage =
  'Stripe: the card requires authentication (3-D Secure) for this payment; the customer must confirm it or update the card.';

/** Our outcome for a failed charge call, from Stripe's error type. */
function chargeOutcomeOf(error: unknown): ChargeResult {
  if (error instanceof LostAnswer)
    return { outcome: 'unknown', message: `Stripe: no answer to the payment (${error.message})` };
  if (error instanceof Stripe.errors.StripeCardError) {
    if (error.code === 'authentication_required' || error.decline_code === 'authentication_required')
      return { outcome: 'declined', message: authenticationMessage };
    if (error.code === 'processing_error') return { outcome: 'error', message: `Stripe: ${error.message}` };
    const reason = error.decline_code || error.code;
    return { outcome: 'declined', message: `Stripe: ${error.message}${reason ? ` (${reason})` : ''}` };
  }
  if (error instanceof StripeGatewayRefusal) return { outcome: 'declined', message: `Stripe: ${error.message}` };
  if (error instanceof Stripe.errors.StripeIdempotencyError && error.statusCode === 409)
    return { outcome: 'unknown', message: `Stripe: the same payment is still in progress (${error.message})` };
  if (error instanceof Stripe.errors.StripeInvalidRequestError) {
    // A payment method or customer Stripe does not know (deleted, detached, wrong account): the
    // customer must give a new card, like a decline. Anything else is a request the engine got wrong.
    const aboutPayer =
      error.param === 'payment_method' || error.param === 'customer' || error.code === 'resource_missing';
    return { outcome: aboutPayer ? 'declined' : 'error', message: `Stripe: ${error.message}` };
  }
  if (error instanceof Stripe.errors.StripeError && (error.statusCode ?? 0) >= 500)
    // Stripe treats a 5xx as indeterminate: the payment may have started before the server failed,
    // and a later attempt under a new key would charge again. `unknown` makes the engine look the
    // key up before it charges anything else.
    return { outcome: 'unknown', message: `Stripe: the server failed mid-request (${error.message})` };
  if (error instanceof Stripe.errors.StripeError) return { outcome: 'error', message: `Stripe: ${error.message}` };
  return { outcome: 'error', message: `Stripe: ${error instanceof Error ? error.message : String(error)}` };
}
