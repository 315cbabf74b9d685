/**
 * Email through the mailer port (`ports/mailer.ts`). A command that sends mail validates its input
 * and records a `mail_delivery` row of due work in its own transaction, naming what to send (an
 * invoice, a card-update request, a portal invitation) and to whom; nothing is rendered or sent
 * there. `runDue` (and so the worker) then builds each due message from the records as they are
 * and hands it to the mailer outside any transaction; a failed send is retried on a back-off
 * schedule and given up after the last retry. Without a mailer (`createBillingEngine`'s `mail`
 * option) every command that would send mail is refused with a 422 and writes nothing.
 */
import { randomUUID } from 'node:crypto';
import { toMajorString } from '../domain/money/conversion.js';
import { hostedPageToken } from '../domain/signing/hosted-page-token.js';
import { invalid, notFound, ValidationCollector } from '../errors.js';
import type { InvoiceRecord } from '../invoices/model.js';
import { createPortalLink, DEFAULT_PORTAL_LINK_LIFETIME_SECONDS, portalLinkUrl } from '../portal-link.js';
import type { MailAttachment, MailKind, MailMessage, MailOptions } from '../ports/mailer.js';
import type { DueWorkRecord, SiteRecord, StorageTransaction } from '../ports/storage.js';
import { type CommandContext, type CommandDeps, runCommand } from './command-runner.js';
import { loadCustomer } from './customer-service.js';
import { loadSite, loadSubscription } from './site-lookup.js';

/** The due-work kind of mail jobs. */
export const MAIL_WORK_KIND = 'mail_delivery';

/** The 422 message of a command that would send mail on an engine without a mailer. */
export const NO_MAILER_MESSAGE = 'This site has no mailer configured.';

/** At most this many addresses in each of `to`, `cc` and `bcc` (the service's limit for recipient_emails). */
export const MAX_MAIL_RECIPIENTS = 5;

/** The default wait before each retry of a failed send, in seconds: six attempts in all. */
export const DEFAULT_MAIL_RETRY_DELAYS_SECONDS: readonly number[] = [60, 300, 1800, 7200, 21600];

/** How long a worker's claim of a mail job holds. */
const LEASE_MS = 5 * 60_000;

/** Longest address kept (RFC 5321's path limit). */
const MAX_ADDRESS_LENGTH = 254;

/** A plain `local@domain.tld` address: nothing a header could be broken with. */
const ADDRESS = /^[^\s@,;:<>()[\]"\\]+@[^\s@,;:<>()[\]"\\]+\.[^\s@,;:<>()[\]"\\]+$/;

/** A mail job as recorded: what the command asked for, to be built into a message when due. */
export interface QueuedMail {
  /** The job's id: the message's `id` when it is sent. */
  readonly id: string;
  readonly kind: MailKind;
  readonly to: readonly string[];
  readonly cc: readonly string[];
  readonly bcc: readonly string[];
  /** When it was queued (the command's instant). */
  readonly queuedAt: Date;
}

/** Recipients of {@link MailService.sendInvoice}, each list as the API gives it (`recipient_emails`, ...). */
export interface SendInvoiceInput {
  /** Up to 5 addresses; default the customer's email. */
  readonly recipientEmails?: unknown;
  /** Up to 5 addresses copied. */
  readonly ccRecipientEmails?: unknown;
  /** Up to 5 addresses copied blind. */
  readonly bccRecipientEmails?: unknown;
}

/** Options of {@link MailService.deliverDue}. */
export interface DeliverMailOptions {
  /** Deliver jobs due at or before this instant (never later than the clock's now); default now. */
  readonly until?: Date;
  /** At most this many jobs. */
  readonly limit?: number;
  /** Only this site's jobs. */
  readonly siteId?: number;
}

/** What a {@link MailService.deliverDue} call did. */
export interface MailDeliverySummary {
  /** Jobs taken up. */
  readonly processed: number;
  /** Messages the mailer accepted. */
  readonly sent: number;
  /** Failed sends scheduled again. */
  readonly retried: number;
  /** Failed sends past the last retry: not tried again. */
  readonly gaveUp: number;
  /** Jobs whose subject went away or changed (a deleted invoice, revoked portal access): nothing sent. */
  readonly skipped: number;
}

/** How the mail service renders an invoice (the invoice service's own PDF and HTML, metafields included). */
export type RenderInvoice = (subdomain: string, uid: string) => Promise<{ pdf: Uint8Array; html: string }>;

/** The engine-wide mail configuration with its defaults filled in. */
interface MailSetup {
  readonly options: MailOptions;
  readonly retryDelaysMs: readonly number[];
  readonly linkLifetimeSeconds: number;
}

/** The payload of a `mail_delivery` row. */
export interface MailJobPayload {
  readonly mail: MailKind;
  readonly to: string[];
  readonly cc: string[];
  readonly bcc: string[];
  /** The invoice of an `invoice` job. */
  readonly invoiceUid?: string;
  /** The subscription of a `payment_update_request` job. */
  readonly subscriptionId?: number;
  /** The customer of a `portal_invitation` job. */
  readonly customerId?: number;
}

/**
 * Mail commands and their delivery. The site-scoped commands are `sendInvoice` and
 * `requestPaymentUpdate`; portal invitations are queued by the portal access service through
 * {@link MailService.queue}.
 */
export class MailService {
  readonly #deps: CommandDeps;
  readonly #setup: MailSetup | undefined;
  readonly #render: RenderInvoice;
  readonly #owner = `mailer-${randomUUID()}`;

  constructor(deps: CommandDeps, options: MailOptions | undefined, render: RenderInvoice) {
    this.#deps = deps;
    this.#render = render;
    if (options !== undefined) {
      const delays = options.retryDelaysSeconds ?? DEFAULT_MAIL_RETRY_DELAYS_SECONDS;
      for (const delay of delays) {
        if (!Number.isSafeInteger(delay) || delay < 1)
          throw new RangeError('mail retryDelaysSeconds must be positive whole numbers');
      }
      const lifetime = options.portalLinkLifetimeSeconds ?? DEFAULT_PORTAL_LINK_LIFETIME_SECONDS;
      if (!Number.isSafeInteger(lifetime) || lifetime < 1)
        throw new RangeError('mail portalLinkLifetimeSeconds must be a positive whole number');
      this.#setup = { options, retryDelaysMs: delays.map((s) => s * 1000), linkLifetimeSeconds: lifetime };
    }
  }

  /** Whether a mailer is configured. */
  get configured(): boolean {
    return this.#setup !== undefined;
  }

  /**
   * Throws the 422 of an engine without a mailer. Commands call it once the records they name are
   * found (an unknown one is a 404 whatever the configuration) and before anything is written.
   */
  requireMailer(): void {
    if (this.#setup === undefined) throw invalid(NO_MAILER_MESSAGE);
  }

  /**
   * Queues an invoice by email: its HTML as the body, its PDF and HTML attached. Recipients default to
   * the customer's email; each list holds at most 5 well-formed addresses. A draft cannot be sent
   * (it has no number and is not owed yet). 404 for an unknown invoice.
   */
  async sendInvoice(subdomain: string, uid: string, input: SendInvoiceInput = {}): Promise<QueuedMail> {
    const errors = new ValidationCollector();
    const to = readAddresses(input.recipientEmails, 'Recipient emails', 'recipient_emails', errors);
    const cc = readAddresses(input.ccRecipientEmails, 'Cc recipient emails', 'cc_recipient_emails', errors);
    const bcc = readAddresses(input.bccRecipientEmails, 'Bcc recipient emails', 'bcc_recipient_emails', errors);
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const invoice = typeof uid === 'string' ? await ctx.tx.invoices.findByUid(site.id, uid) : undefined;
      if (invoice === undefined) throw notFound('Invoice', uid);
      this.requireMailer();
      errors.throwIfAny();
      if (invoice.status === 'draft') throw invalid('Invoice: a draft cannot be sent; issue it first.', 'status');
      let recipients = to ?? [];
      if (recipients.length === 0) {
        const customer = await ctx.tx.customers.findById(site.id, invoice.customerId);
        recipients = [customerAddress(customer?.email ?? invoice.customer.email)];
      }
      return this.queue(ctx, site, invoice.id, {
        mail: 'invoice',
        to: recipients,
        cc: cc ?? [],
        bcc: bcc ?? [],
        invoiceUid: invoice.uid,
      });
    });
  }

  /**
   * Queues an email to the subscription's customer with a link to the hosted card update page
   * (`/update_payment/{id}/{token}` on the site's origin). 404 for an unknown subscription.
   */
  async requestPaymentUpdate(subdomain: string, subscriptionId: number): Promise<QueuedMail> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      this.requireMailer();
      const customer = await loadCustomer(ctx.tx, site.id, subscription.customerId);
      return this.queue(ctx, site, subscription.id, {
        mail: 'payment_update_request',
        to: [customerAddress(customer.email)],
        cc: [],
        bcc: [],
        subscriptionId: subscription.id,
      });
    });
  }

  /**
   * Records a mail job due now in the command's transaction (refused with the 422 without a
   * mailer). For the services that send mail as part of a command of their own.
   */
  async queue(ctx: CommandContext, site: SiteRecord, subjectId: number, payload: MailJobPayload): Promise<QueuedMail> {
    this.requireMailer();
    const id = `mail:${payload.mail}:${subjectId}:${randomUUID()}`;
    await ctx.tx.dueWork.schedule({
      siteId: site.id,
      kind: MAIL_WORK_KIND,
      subjectId,
      dueAt: ctx.now,
      uniqueKey: id,
      payload: { ...payload },
    });
    return { id, kind: payload.mail, to: payload.to, cc: payload.cc, bcc: payload.bcc, queuedAt: ctx.now };
  }

  /** How many mail jobs are due up to `until` (default now). None without a mailer: they wait. */
  countDue(options: { until?: Date; siteId?: number } = {}): Promise<number> {
    if (this.#setup === undefined) return Promise.resolve(0);
    const until = this.#until(options.until);
    return this.#deps.storage.transaction(
      (tx) =>
        tx.dueWork.countDue({
          until,
          kinds: [MAIL_WORK_KIND],
          ...(options.siteId === undefined ? {} : { siteId: options.siteId }),
        }),
      { readOnly: true },
    );
  }

  /**
   * Builds and sends the mail that is due, one job at a time, each claimed so that concurrent
   * workers never send one twice at once. Never ahead of the clock: `until` past now counts as
   * now (a message is a real-world effect, whatever a test site bills ahead). A send that fails
   * is released to run again after the next delay of the retry schedule, and completed (given up)
   * after the last; a job whose subject is gone is completed without sending. Without a mailer
   * nothing is claimed: jobs wait for an engine that has one.
   */
  async deliverDue(options: DeliverMailOptions = {}): Promise<MailDeliverySummary> {
    const summary = { processed: 0, sent: 0, retried: 0, gaveUp: 0, skipped: 0 };
    const setup = this.#setup;
    if (setup === undefined) return summary;
    const until = this.#until(options.until);
    const seen = new Set<string>();
    for (;;) {
      const left = options.limit === undefined ? 50 : Math.min(50, options.limit - summary.processed);
      if (left <= 0) break;
      const now = this.#deps.clock.now();
      const batch = await this.#deps.storage.transaction((tx) =>
        tx.dueWork.claim({
          until,
          limit: left,
          owner: this.#owner,
          leaseUntil: new Date(now.getTime() + LEASE_MS),
          now,
          kinds: [MAIL_WORK_KIND],
          ...(options.siteId === undefined ? {} : { siteId: options.siteId }),
        }),
      );
      // A job released to a retry is due later than now, so it is not claimed again in this run;
      // `seen` makes sure of it whatever the schedule.
      const fresh = batch.filter((item) => !seen.has(`${item.siteId}:${item.id}`));
      if (fresh.length === 0) break;
      for (const item of fresh) {
        seen.add(`${item.siteId}:${item.id}`);
        summary.processed += 1;
        const outcome = await this.#deliver(setup, item);
        summary[outcome] += 1;
      }
    }
    return summary;
  }

  /** One job: build, send, then complete it or schedule its retry. */
  async #deliver(setup: MailSetup, item: DueWorkRecord): Promise<'sent' | 'retried' | 'gaveUp' | 'skipped'> {
    let outcome: 'sent' | 'retried' | 'gaveUp' | 'skipped';
    try {
      const message = await this.#build(setup, item);
      if (message === undefined) outcome = 'skipped';
      else {
        await setup.options.mailer.send(message);
        outcome = 'sent';
      }
    } catch {
      outcome = item.attempts < setup.retryDelaysMs.length ? 'retried' : 'gaveUp';
    }
    const now = this.#deps.clock.now();
    await this.#deps.storage.transaction(async (tx) => {
      if (outcome === 'retried') {
        const delay = setup.retryDelaysMs[item.attempts] as number;
        await tx.dueWork.release(item.siteId, item.id, this.#owner, new Date(now.getTime() + delay), now);
      } else {
        await tx.dueWork.complete(item.siteId, item.id, this.#owner, now);
      }
    });
    return outcome;
  }

  /** The message of a job as its records are now, or undefined when there is nothing to send. */
  async #build(setup: MailSetup, item: DueWorkRecord): Promise<MailMessage | undefined> {
    const job = item.payload as unknown as MailJobPayload;
    const now = this.#deps.clock.now();
    const found = await this.#deps.storage.transaction(
      async (tx) => {
        const site = await tx.sites.findById(item.siteId);
        return site === undefined ? undefined : { site, content: await jobContent(tx, site, job) };
      },
      { readOnly: true },
    );
    if (found?.content === undefined) return undefined;
    const { site, content } = found;
    const origin = setup.options.siteOrigin(site.subdomain);
    const from = setup.options.from?.(site) ?? `billing@${new URL(origin).hostname}`;
    const base = {
      id: item.uniqueKey,
      site: site.subdomain,
      kind: job.mail,
      from,
      to: job.to,
      cc: job.cc,
      bcc: job.bcc,
    };
    switch (content.kind) {
      case 'invoice': {
        const { invoice } = content;
        const { pdf, html } = await this.#render(site.subdomain, invoice.uid);
        const number = invoice.number ?? invoice.uid;
        const attachments: MailAttachment[] = [
          { filename: `${fileName(number)}.pdf`, contentType: 'application/pdf', content: pdf },
          { filename: `${fileName(number)}.html`, contentType: 'text/html; charset=utf-8', content: html },
        ];
        const due = `${toMajorString(invoice.dueInCents, invoice.currency)} ${invoice.currency}`;
        return {
          ...base,
          subject: `Invoice ${number} from ${site.name}`,
          text: [
            `Hello ${invoice.customer.firstName},`,
            '',
            `Please find attached invoice ${number} from ${site.name}, issued ${invoice.issueDate}.`,
            `Amount due: ${due} (due ${invoice.dueDate}).`,
          ].join('\n'),
          html,
          attachments,
        };
      }
      case 'payment_update_request': {
        const { subscriptionId, customer } = content;
        const url = `${origin}/update_payment/${subscriptionId}/${hostedPageToken('update_payment', subscriptionId, site.sharedKey)}`;
        return {
          ...base,
          subject: `Please update your payment details for ${site.name}`,
          text: [
            `Hello ${customer.firstName},`,
            '',
            `${site.name} asks you to update the payment details of your subscription. You can do it here:`,
            url,
          ].join('\n'),
          html: linkHtml(
            `Hello ${customer.firstName},`,
            `${site.name} asks you to update the payment details of your subscription.`,
            url,
            'Update payment details',
          ),
          attachments: [],
        };
      }
      case 'portal_invitation': {
        const { customer } = content;
        const link = createPortalLink({
          customerId: customer.id,
          sharedKey: site.sharedKey,
          now,
          lifetimeSeconds: setup.linkLifetimeSeconds,
        });
        const url = portalLinkUrl(origin, link);
        return {
          ...base,
          subject: `Your billing portal for ${site.name}`,
          text: [
            `Hello ${customer.firstName},`,
            '',
            `${site.name} invites you to its billing portal, where you can manage your subscriptions:`,
            url,
            '',
            `This link works until ${link.expiresAt.toISOString().slice(0, 10)}.`,
          ].join('\n'),
          html: linkHtml(
            `Hello ${customer.firstName},`,
            `${site.name} invites you to its billing portal, where you can manage your subscriptions.`,
            url,
            'Open the billing portal',
          ),
          attachments: [],
        };
      }
    }
  }

  #until(until: Date | undefined): Date {
    const now = this.#deps.clock.now();
    return until === undefined || until.getTime() > now.getTime() ? now : until;
  }
}

/** What a job's message is made of, read in one transaction. */
type JobContent =
  | {
      readonly kind: 'invoice';
      readonly invoice: InvoiceRecord;
    }
  | {
      readonly kind: 'payment_update_request';
      readonly subscriptionId: number;
      readonly customer: { readonly firstName: string };
    }
  | { readonly kind: 'portal_invitation'; readonly customer: { readonly id: number; readonly firstName: string } };

async function jobContent(
  tx: StorageTransaction,
  site: SiteRecord,
  job: MailJobPayload,
): Promise<JobContent | undefined> {
  switch (job.mail) {
    case 'invoice': {
      const invoice = job.invoiceUid === undefined ? undefined : await tx.invoices.findByUid(site.id, job.invoiceUid);
      if (invoice === undefined || invoice.status === 'draft') return undefined;
      return { kind: 'invoice', invoice };
    }
    case 'payment_update_request': {
      const id = job.subscriptionId;
      const subscription = id === undefined ? undefined : await tx.subscriptions.findById(site.id, id);
      if (subscription === undefined) return undefined;
      const customer = await tx.customers.findById(site.id, subscription.customerId);
      return customer === undefined
        ? undefined
        : { kind: 'payment_update_request', subscriptionId: subscription.id, customer };
    }
    case 'portal_invitation': {
      const id = job.customerId;
      const customer = id === undefined ? undefined : await tx.customers.findById(site.id, id);
      if (customer === undefined) return undefined;
      // Revoked (or never enabled) since the invitation was asked for: nothing to invite to.
      const access = await tx.portalAccess.find(site.id, customer.id);
      return access?.enabled === true ? { kind: 'portal_invitation', customer } : undefined;
    }
    default:
      return undefined;
  }
}

/** A list of addresses from the API: undefined when absent, else up to 5 checked, trimmed addresses. */
function readAddresses(
  value: unknown,
  field: string,
  attribute: string,
  errors: ValidationCollector,
): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    errors.add(`${field}: must be a list of email addresses.`, attribute);
    return undefined;
  }
  if (value.length > MAX_MAIL_RECIPIENTS) {
    errors.add(`${field}: at most ${MAX_MAIL_RECIPIENTS} addresses are allowed.`, attribute);
    return undefined;
  }
  const out: string[] = [];
  for (const entry of value) {
    const address = typeof entry === 'string' ? entry.trim() : '';
    if (!isMailAddress(address)) {
      errors.add(
        `${field}: ${JSON.stringify(typeof entry === 'string' ? entry : String(entry))} is not a valid email address.`,
        attribute,
      );
      continue;
    }
    if (!out.includes(address)) out.push(address);
  }
  return out;
}

/** Whether `address` is a plain, well-formed `local@domain.tld` address. */
export function isMailAddress(address: string): boolean {
  return address.length <= MAX_ADDRESS_LENGTH && ADDRESS.test(address);
}

/** The customer's address as a recipient; a 422 when it cannot be mailed. */
export function customerAddress(email: string): string {
  const address = email.trim();
  if (!isMailAddress(address)) {
    throw invalid('Customer email: is not a valid email address, so there is no one to send to.', 'email');
  }
  return address;
}

/** A file name from a document number: letters, digits, `-` and `_` only. */
function fileName(number: string): string {
  return number.replace(/[^A-Za-z0-9_-]/g, '') || 'invoice';
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A short HTML message with one link. */
function linkHtml(greeting: string, body: string, url: string, label: string): string {
  return [
    '<!doctype html><html><body>',
    `<p>${escapeHtml(greeting)}</p>`,
    `<p>${escapeHtml(body)}</p>`,
    `<p><a href="${escapeHtml(url)}">${escapeHtml(label)}</a></p>`,
    `<p>${escapeHtml(url)}</p>`,
    '</body></html>',
  ].join('\n');
}
