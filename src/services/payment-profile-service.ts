import { BillingError, invalid, notFound, ValidationCollector } from '../errors.js';
import type {
  AddressFields,
  PaymentProfileRecord,
  SiteRecord,
  StorageTransaction,
  SubscriptionRecord,
  SubscriptionState,
} from '../ports/storage.js';
import { type CommandContext, runCommand } from './command-runner.js';
import { clampPage, loadCustomer } from './customer-service.js';
import { loadSite } from './site-service.js';
import {
  type CreditCardInput,
  loadSubscription,
  maskedProfile,
  type PaymentProfileImport,
  parseCard,
  parseImport,
  requireTaxAddress,
  type StoredMethod,
  type SubscriptionDeps,
} from './subscription-service.js';

/**
 * Input of {@link PaymentProfileService.create} (`POST /payment_profiles.json`): the customer, and
 * either a card (`fullNumber` and expiry, tokenized at the gateway; the number is never kept) or a
 * vault import (`vaultToken` with `currentVault`, stored as given).
 */
export interface CreatePaymentProfileInput {
  readonly customerId?: number;
  readonly paymentType?: string;
  readonly fullNumber?: string;
  readonly expirationMonth?: number | string;
  readonly expirationYear?: number | string;
  readonly cvv?: string;
  readonly firstName?: string;
  readonly lastName?: string;
  readonly vaultToken?: string;
  readonly customerVaultToken?: string | null;
  readonly currentVault?: string;
  readonly cardType?: string;
  readonly lastFour?: string;
  /** A Chargify.js one-time token: refused, as nothing on this server issues them. */
  readonly chargifyToken?: string;
  readonly billingAddress?: Partial<AddressFields>;
}

/** Query of {@link PaymentProfileService.list}. */
export interface PaymentProfileListQuery {
  readonly customerId?: number;
  readonly page?: number;
  readonly perPage?: number;
}

/** States after which a subscription never bills again: a profile it still names is not "in use". */
const ENDED: readonly SubscriptionState[] = ['cancelled', 'expired', 'failed_to_create'];

/** Payment profiles: create, list, read, delete, and a subscription's default. */
export class PaymentProfileService {
  readonly #deps: SubscriptionDeps;

  constructor(deps: SubscriptionDeps) {
    this.#deps = deps;
  }

  /** The storage, clock and gateway the commands run on. */
  protected get deps(): SubscriptionDeps {
    return this.#deps;
  }

  /**
   * Creates a payment profile for a customer. A card is checked and tokenized at the gateway
   * before anything is written (a refused card writes nothing); a vault import needs the token and
   * its vault. The new profile is not made any subscription's default (as the service does). When
   * one of the customer's subscriptions is taxed, a complete billing address is required.
   */
  async create(subdomain: string, input: CreatePaymentProfileInput): Promise<PaymentProfileRecord> {
    const { site, taxed } = await this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      if (input.customerId === undefined) throw notFound('Customer');
      await loadCustomer(tx, site.id, input.customerId);
      return { site, taxed: await customerTaxed(tx, site.id, input.customerId) };
    });
    const customerId = input.customerId!;
    const method = await this.#method(input, taxed);
    return runCommand(this.#deps, async (ctx) => {
      const customer = await loadCustomer(ctx.tx, site.id, customerId);
      return ctx.tx.customers.insertPaymentProfile({
        siteId: site.id,
        customerId,
        paymentType: 'credit_card',
        vaultToken: method.vaultToken,
        customerVaultToken: method.customerVaultToken,
        currentVault: method.currentVault,
        cardType: method.cardType,
        lastFour: method.lastFour,
        expirationMonth: method.expirationMonth,
        expirationYear: method.expirationYear,
        firstName: method.firstName ?? customer.firstName,
        lastName: method.lastName ?? customer.lastName,
        billingAddress: {
          address: null,
          address2: null,
          city: null,
          state: null,
          zip: null,
          country: null,
          ...input.billingAddress,
        },
        createdAt: ctx.now,
        updatedAt: ctx.now,
      });
    });
  }

  /** One page of the site's payment profiles (of one customer when given), oldest first; `[]` when none. */
  list(subdomain: string, query: PaymentProfileListQuery = {}): Promise<PaymentProfileRecord[]> {
    return this.#deps.storage.transaction(
      async (tx) => {
        const site = await loadSite(tx, subdomain);
        return tx.customers.listPaymentProfiles(
          site.id,
          query.customerId === undefined ? {} : { customerId: query.customerId },
          clampPage(query.page, query.perPage),
        );
      },
      { readOnly: true },
    );
  }

  /** A payment profile; `not_found` when missing. */
  get(subdomain: string, id: number): Promise<PaymentProfileRecord> {
    return this.#deps.storage.transaction(async (tx) => loadProfile(tx, (await loadSite(tx, subdomain)).id, id), {
      readOnly: true,
    });
  }

  /**
   * Deletes a payment profile no live subscription uses; one that does is refused (422) and kept.
   * Ended subscriptions (canceled, expired) that still name it are left without a card.
   */
  delete(subdomain: string, id: number): Promise<void> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      await loadProfile(ctx.tx, site.id, id);
      const users = await subscriptionsUsing(ctx.tx, site.id, id);
      const live = users.filter((s) => !ENDED.includes(s.state));
      if (live.length > 0) {
        throw invalid(
          `Payment profile: is in use by subscription ${live.map((s) => s.id).join(', ')} and cannot be deleted.`,
          'payment_profile',
        );
      }
      for (const subscription of users) await detach(ctx, site, subscription);
      await ctx.tx.customers.deletePaymentProfile(site.id, id);
    });
  }

  /**
   * Deletes a payment profile of the subscription's customer
   * (`DELETE /subscriptions/{sid}/payment_profiles/{id}.json`): it is removed from every
   * subscription that uses it (they are left without a card until another is made their default)
   * and deleted. `not_found` when the profile does not belong to the subscription's customer.
   */
  deleteForSubscription(subdomain: string, subscriptionId: number, id: number): Promise<void> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      const profile = await loadProfile(ctx.tx, site.id, id);
      if (profile.customerId !== subscription.customerId) throw notFound('Payment profile', id);
      for (const user of await subscriptionsUsing(ctx.tx, site.id, id)) await detach(ctx, site, user);
      await ctx.tx.customers.deletePaymentProfile(site.id, id);
    });
  }

  /**
   * Makes a profile of the subscription's customer its default: the next charges use it.
   * Records `subscription_card_update` with both masked profiles. A profile of another customer,
   * or the one already in use, is refused (422).
   */
  changeDefault(subdomain: string, subscriptionId: number, id: number): Promise<PaymentProfileRecord> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const subscription = await loadSubscription(ctx.tx, site.id, subscriptionId);
      const profile = await loadProfile(ctx.tx, site.id, id);
      if (profile.customerId !== subscription.customerId)
        throw invalid("Payment profile: must belong to the subscription's customer.", 'payment_profile_id');
      if (subscription.paymentProfileId === id)
        throw invalid("Payment profile: is already the subscription's default.", 'payment_profile_id');
      const previous =
        subscription.paymentProfileId === null
          ? undefined
          : await ctx.tx.customers.findPaymentProfile(site.id, subscription.paymentProfileId);
      const moved = await ctx.tx.subscriptions.updateAtVersion(site.id, subscription.id, subscription.version, {
        paymentProfileId: id,
        updatedAt: ctx.now,
      });
      if (!moved) throw new BillingError('conflict', 'The subscription was changed by another request; try again.');
      ctx.record({
        siteId: site.id,
        key: 'subscription_card_update',
        subjectType: 'subscription',
        subjectId: subscription.id,
        payload: {
          subscription: { id: subscription.id },
          previous_payment_profile: previous ? maskedProfile(previous) : null,
          updated_payment_profile: maskedProfile(profile),
        },
      });
      return profile;
    });
  }

  /** The method to store: a card tokenized now, or a vault import; every problem at once. */
  async #method(input: CreatePaymentProfileInput, taxed: boolean): Promise<StoredMethod> {
    const errors = new ValidationCollector();
    if (input.paymentType !== undefined && input.paymentType !== 'credit_card')
      errors.add(
        `Payment type: '${input.paymentType}' is not supported by this server; only credit_card is.`,
        'payment_profile.payment_type',
      );
    if (input.chargifyToken !== undefined)
      errors.add(
        'Chargify token: this server issues no one-time tokens (there is no Chargify.js here); send the card or a vault_token with its current_vault.',
        'payment_profile.chargify_token',
      );
    const hasCard = input.fullNumber !== undefined;
    const hasVault = input.vaultToken !== undefined;
    if (hasCard && hasVault)
      errors.add('Provide either a full_number or a vault_token, not both.', 'payment_profile.vault_token');
    if (!hasCard && !hasVault && input.chargifyToken === undefined)
      errors.add(
        'Either the full_number, expiration_month and expiration_year, or a vault_token and current_vault, are required.',
        'payment_profile.full_number',
      );
    if (hasVault && (input.currentVault === undefined || input.currentVault.trim() === ''))
      errors.add('Current vault: cannot be blank.', 'payment_profile.current_vault');
    errors.throwIfAny();
    requireTaxAddress(taxed, input.billingAddress ?? {});
    if (hasVault) {
      const imported: PaymentProfileImport = {
        vaultToken: input.vaultToken!,
        customerVaultToken: input.customerVaultToken ?? null,
        currentVault: input.currentVault!.trim(),
        expirationMonth: input.expirationMonth ?? '',
        expirationYear: input.expirationYear ?? '',
        ...(input.cardType === undefined ? {} : { cardType: input.cardType }),
        ...(input.lastFour === undefined ? {} : { lastFour: input.lastFour }),
        ...(input.firstName === undefined ? {} : { firstName: input.firstName }),
        ...(input.lastName === undefined ? {} : { lastName: input.lastName }),
      };
      return parseImport(imported, this.#deps.gateway);
    }
    const cardInput: CreditCardInput = {
      fullNumber: input.fullNumber!,
      expirationMonth: input.expirationMonth ?? '',
      expirationYear: input.expirationYear ?? '',
      ...(input.cvv === undefined ? {} : { cvv: input.cvv }),
      ...(input.firstName === undefined ? {} : { firstName: input.firstName }),
      ...(input.lastName === undefined ? {} : { lastName: input.lastName }),
    };
    const card = parseCard(cardInput, this.#deps.gateway);
    const tokenized = await this.#deps.gateway.tokenize(card);
    if (!tokenized.ok) throw invalid(tokenized.message, 'payment_profile.full_number');
    return {
      vaultToken: tokenized.vaultToken,
      customerVaultToken: tokenized.customerVaultToken,
      currentVault: this.#deps.gateway.name,
      cardType: tokenized.cardType,
      lastFour: tokenized.lastFour,
      expirationMonth: card.expirationMonth,
      expirationYear: card.expirationYear,
      firstName: card.firstName,
      lastName: card.lastName,
    };
  }
}

/** A payment profile inside a transaction; `not_found` when missing. */
export async function loadProfile(tx: StorageTransaction, siteId: number, id: number): Promise<PaymentProfileRecord> {
  const profile = await tx.customers.findPaymentProfile(siteId, id);
  if (!profile) throw notFound('Payment profile', id);
  return profile;
}

/** Every subscription whose default is this profile, page by page. */
export async function subscriptionsUsing(
  tx: StorageTransaction,
  siteId: number,
  profileId: number,
): Promise<SubscriptionRecord[]> {
  const out: SubscriptionRecord[] = [];
  for (let page = 1; ; page++) {
    const rows = await tx.subscriptions.list(siteId, { paymentProfileId: profileId }, { page, perPage: 200 });
    out.push(...rows);
    if (rows.length < 200) return out;
  }
}

/** Leaves a subscription without a default payment profile. */
async function detach(ctx: CommandContext, site: SiteRecord, subscription: SubscriptionRecord): Promise<void> {
  const moved = await ctx.tx.subscriptions.updateAtVersion(site.id, subscription.id, subscription.version, {
    paymentProfileId: null,
    updatedAt: ctx.now,
  });
  if (!moved) throw new BillingError('conflict', 'The subscription was changed by another request; try again.');
}

/** Whether any of the customer's subscriptions is for a taxed product version. */
async function customerTaxed(tx: StorageTransaction, siteId: number, customerId: number): Promise<boolean> {
  for (let page = 1; ; page++) {
    const rows = await tx.subscriptions.list(siteId, { customerId }, { page, perPage: 200 });
    for (const sub of rows) {
      if ((await tx.catalog.findProductVersion(siteId, sub.productId, sub.productVersion))?.terms.taxable) return true;
    }
    if (rows.length < 200) return false;
  }
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const PAYMENT_PROFILE_METHODS = [
  'create',
  'list',
  'get',
  'delete',
  'deleteForSubscription',
  'changeDefault',
] as const;
