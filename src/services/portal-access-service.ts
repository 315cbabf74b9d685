/**
 * Customers' billing-portal access: enabling it (optionally with an invitation email), re-sending
 * the invitation and revoking it. A customer whose access was never enabled may still use portal
 * links, as before this existed (links are handed out by the management-link API); a revoked
 * customer's links stop working until access is enabled again.
 */
import { invalid } from '../errors.js';
import type { CustomerRecord, PortalAccessRecord, SiteRecord } from '../ports/storage.js';
import { type CommandContext, type CommandDeps, runCommand } from './command-runner.js';
import { loadCustomer } from './customer-service.js';
import { customerAddress, type MailService, type QueuedMail } from './mail-service.js';
import { runRead } from './read-runner.js';
import { loadSite } from './site-lookup.js';

/** The methods a site handle exposes (`site.portalAccess`). */
export const PORTAL_ACCESS_METHODS = ['get', 'enable', 'resendInvitation', 'revoke', 'allows'] as const;

/** The 422 of a resend or revoke for a customer whose access is not enabled. */
export const PORTAL_NOT_ENABLED_MESSAGE = 'Billing Portal is not enabled for this customer.';

/** A customer with their portal access (undefined when it was never enabled). */
export interface CustomerPortalAccess {
  readonly customer: CustomerRecord;
  readonly access: PortalAccessRecord | undefined;
  /** The invitation queued by this call, if any. */
  readonly invitation?: QueuedMail;
}

/** Options of {@link PortalAccessService.enable}. */
export interface EnablePortalOptions {
  /** Send the customer an invitation email as well (the API's `auto_invite=1`); needs a mailer. */
  readonly invite?: boolean;
}

/** Portal access commands, per site subdomain. */
export class PortalAccessService {
  readonly #deps: CommandDeps;
  readonly #mail: MailService;

  constructor(deps: CommandDeps, mail: MailService) {
    this.#deps = deps;
    this.#mail = mail;
  }

  /** The customer and their access; 404 for an unknown customer. */
  get(subdomain: string, customerId: number): Promise<CustomerPortalAccess> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      const customer = await loadCustomer(tx, site.id, customerId);
      return { customer, access: await tx.portalAccess.find(site.id, customer.id) };
    });
  }

  /**
   * Whether the customer's portal links may be used: false only for a revoked customer (and for
   * an unknown one). For the portal pages, after the link itself has been checked.
   */
  allows(subdomain: string, customerId: number): Promise<boolean> {
    return runRead(this.#deps, subdomain, async ({ tx, site }) => {
      if ((await tx.customers.findById(site.id, customerId)) === undefined) return false;
      const access = await tx.portalAccess.find(site.id, customerId);
      return access === undefined || access.enabled;
    });
  }

  /**
   * Enables the customer's portal access (again, after a revocation); enabling an enabled customer
   * changes nothing but may invite. With `invite`, an invitation with a portal link is queued too,
   * which needs a mailer (422 without one, before anything is written).
   */
  async enable(
    subdomain: string,
    customerId: number,
    options: EnablePortalOptions = {},
  ): Promise<CustomerPortalAccess> {
    const invite = options.invite === true;
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const customer = await loadCustomer(ctx.tx, site.id, customerId);
      if (invite) this.#mail.requireMailer();
      const existing = await ctx.tx.portalAccess.find(site.id, customer.id);
      if (existing?.enabled === true && !invite) return { customer, access: existing };
      let access = await ctx.tx.portalAccess.save({
        siteId: site.id,
        customerId: customer.id,
        enabled: true,
        createdAt: existing?.createdAt ?? ctx.now,
        inviteLastSentAt: existing?.inviteLastSentAt ?? null,
        inviteLastAcceptedAt: existing?.inviteLastAcceptedAt ?? null,
        revokedAt: existing?.revokedAt ?? null,
        updatedAt: ctx.now,
      });
      if (!invite) return { customer, access };
      const sent = await this.#invite(ctx, site, customer, access);
      access = sent.access;
      return { customer, access, invitation: sent.invitation };
    });
  }

  /**
   * Sends the invitation again; 404 for an unknown customer, 422 when the customer's access is not
   * enabled (never enabled, or revoked) and without a mailer.
   */
  async resendInvitation(subdomain: string, customerId: number): Promise<CustomerPortalAccess> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const customer = await loadCustomer(ctx.tx, site.id, customerId);
      this.#mail.requireMailer();
      const access = await ctx.tx.portalAccess.find(site.id, customer.id);
      if (access?.enabled !== true) throw invalid(PORTAL_NOT_ENABLED_MESSAGE);
      const sent = await this.#invite(ctx, site, customer, access);
      return { customer, ...sent };
    });
  }

  /**
   * Revokes the customer's portal access: their portal links stop working (the portal answers
   * 403) and invitations not yet sent are dropped. 422 when access is not enabled. Sends no mail,
   * so it needs no mailer.
   */
  revoke(subdomain: string, customerId: number): Promise<CustomerPortalAccess> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const customer = await loadCustomer(ctx.tx, site.id, customerId);
      const access = await ctx.tx.portalAccess.find(site.id, customer.id);
      if (access?.enabled !== true) throw invalid(PORTAL_NOT_ENABLED_MESSAGE);
      const revoked = await ctx.tx.portalAccess.save({
        ...access,
        enabled: false,
        revokedAt: ctx.now,
        updatedAt: ctx.now,
      });
      return { customer, access: revoked };
    });
  }

  async #invite(
    ctx: CommandContext,
    site: SiteRecord,
    customer: CustomerRecord,
    access: PortalAccessRecord,
  ): Promise<{ access: PortalAccessRecord; invitation: QueuedMail }> {
    const invitation = await this.#mail.queue(ctx, site, customer.id, {
      mail: 'portal_invitation',
      to: [customerAddress(customer.email)],
      cc: [],
      bcc: [],
      customerId: customer.id,
    });
    const updated = await ctx.tx.portalAccess.save({ ...access, inviteLastSentAt: ctx.now, updatedAt: ctx.now });
    return { access: updated, invitation };
  }
}
