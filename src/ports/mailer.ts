/**
 * The mailer port: how the engine hands email to the outside world. The engine never sends mail
 * inside a command's transaction: a command that sends mail (an invoice, a card-update request, a
 * billing-portal invitation) validates and records a mail job as due work, committed with the
 * request, and `runDue` (the worker) builds the message and hands it to the {@link Mailer}, retrying
 * on failure. Delivery is at least once: a message whose `send` succeeded but whose completion was
 * not recorded (a crash between the two) is sent again with the same `id`, so a mailer that can
 * deduplicate should use it.
 */

/** A file attached to a message. */
export interface MailAttachment {
  /** The file name shown to the recipient (`INV-42.pdf`). */
  readonly filename: string;
  /** Its media type (`application/pdf`, `text/html; charset=utf-8`). */
  readonly contentType: string;
  /** Its bytes (binary) or text. */
  readonly content: Uint8Array | string;
}

/** What a message is about. */
export type MailKind = 'invoice' | 'payment_update_request' | 'portal_invitation';

/** One email, ready to send. Addresses are plain `local@domain` strings, already checked. */
export interface MailMessage {
  /** Unique per message and the same on every retry of it: a key to deduplicate by. */
  readonly id: string;
  /** The site the message is sent for (its subdomain). */
  readonly site: string;
  readonly kind: MailKind;
  readonly from: string;
  readonly to: readonly string[];
  readonly cc: readonly string[];
  readonly bcc: readonly string[];
  readonly subject: string;
  /** The plain-text body. */
  readonly text: string;
  /** The HTML body, when there is one. */
  readonly html?: string;
  readonly attachments: readonly MailAttachment[];
}

/**
 * Sends email. `send` resolves once the message is accepted (by an SMTP relay, an email API, a
 * file) and rejects when it was not: the engine then tries again later, on a back-off schedule,
 * and gives up after a few attempts.
 */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** The `mail` option of `createBillingEngine`: a mailer and what messages need to be written. */
export interface MailOptions {
  readonly mailer: Mailer;
  /**
   * The public origin (`https://acme.example.com`: scheme, host, optional port) of a site's
   * customer-facing pages, for the links in messages: the billing portal and the hosted card
   * update page. Never derived from a request.
   */
  readonly siteOrigin: (subdomain: string) => string;
  /** The sender of a site's messages; default `billing@` the host of its origin. */
  readonly from?: (site: { readonly subdomain: string; readonly name: string }) => string;
  /** How long the portal links in invitations work, in seconds; default 65 days. */
  readonly portalLinkLifetimeSeconds?: number;
  /**
   * Seconds to wait before each retry of a failed send; its length is the number of retries
   * (default 1 min, 5 min, 30 min, 2 h, 6 h: six attempts in all, then the message is given up).
   */
  readonly retryDelaysSeconds?: readonly number[];
}
