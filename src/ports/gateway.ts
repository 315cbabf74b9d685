/**
 * The payment gateway port. The engine never sees a full card number after `tokenize`: it keeps
 * the vault token, the card type, the last four digits and the expiry.
 */

/** A card as a customer typed it. Passed to `tokenize` only; never stored. */
export interface CardInput {
  readonly fullNumber: string;
  readonly expirationMonth: number;
  readonly expirationYear: number;
  readonly cvv?: string;
  readonly firstName?: string;
  readonly lastName?: string;
  /**
   * The payer's customer at this gateway when it already has one (a card update of a profile this
   * gateway vaulted): the new card joins that customer instead of a new one. Gateways without
   * customers ignore it.
   */
  readonly customerVaultToken?: string;
}

/** What tokenizing a card gives. */
export type TokenizeResult =
  | {
      readonly ok: true;
      readonly vaultToken: string;
      readonly customerVaultToken: string | null;
      /** The service's spelling: `visa`, `master`, `american_express`, `discover`, `bogus`, ... */
      readonly cardType: string;
      readonly lastFour: string;
    }
  | { readonly ok: false; readonly message: string };

/** A charge request. The idempotency key is deterministic: the same key never charges twice. */
export interface ChargeRequest {
  readonly idempotencyKey: string;
  readonly amountInCents: number;
  readonly currency: string;
  readonly vaultToken: string;
  readonly customerVaultToken: string | null;
  readonly description: string;
}

/**
 * What a charge gave. `declined`: the card was refused (the customer must act). `error`: the
 * gateway failed and a retry may succeed. `unknown`: no answer (timeout); reconcile by key.
 */
export type ChargeResult =
  | { readonly outcome: 'success'; readonly transactionId: string }
  | { readonly outcome: 'declined'; readonly message: string }
  | { readonly outcome: 'error'; readonly message: string }
  | { readonly outcome: 'unknown'; readonly message: string };

/** A refund request against an earlier successful charge. */
export interface RefundRequest {
  readonly idempotencyKey: string;
  readonly chargeTransactionId: string;
  readonly amountInCents: number;
  readonly currency: string;
}

/** What a refund gave. */
export type RefundResult =
  | { readonly outcome: 'success'; readonly transactionId: string }
  | { readonly outcome: 'failure'; readonly message: string };

/** A payment gateway. */
export interface PaymentGateway {
  /** The name shown as `current_vault` and `gateway_used`. */
  readonly name: string;
  /** Whether `refund` is supported. */
  readonly supportsRefunds: boolean;
  tokenize(card: CardInput): Promise<TokenizeResult>;
  charge(request: ChargeRequest): Promise<ChargeResult>;
  refund(request: RefundRequest): Promise<RefundResult>;
  /**
   * The outcome of an earlier charge by idempotency key, or undefined when the gateway never saw
   * it. Used to reconcile attempts whose outcome is unknown, instead of charging again.
   */
  lookup(idempotencyKey: string): Promise<ChargeResult | undefined>;
  /** At most this many charge calls in flight at once from one `runDue` (many gateways rate-limit); default no limit of its own. */
  readonly maxConcurrentCharges?: number;
  /** The `current_vault` names of imported tokens this gateway charges; default its `name` alone. */
  readonly vaultNames?: readonly string[];
  /** Whether `value`, given where a card number goes, is a token of this gateway (e.g. Stripe's `pm_...`); default none is. */
  isCardToken?(value: string): boolean;
}
