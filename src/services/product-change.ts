/**
 * Product changes without proration (at once, or delayed to the next renewal) and the lookups a
 * migration shares with them. Used by the lifecycle's subscription update and by migrations.
 */
import { BillingError, invalid, notFound } from '../errors.js';
import type {
  ProductRecord,
  ProductVersionRecord,
  SiteRecord,
  StorageTransaction,
  SubscriptionRecord,
} from '../ports/storage.js';
import type { CommandContext } from './command-runner.js';

/** Input of a product change without proration (`PUT /subscriptions/{id}` with a product). */
export interface ProductChangeInput {
  readonly productHandle?: string;
  readonly productId?: number;
  /** Change at the next renewal instead of now. */
  readonly delayed?: boolean;
}

export async function writeAtVersion(
  tx: StorageTransaction,
  subscription: SubscriptionRecord,
  patch: Parameters<StorageTransaction['subscriptions']['updateAtVersion']>[3],
): Promise<SubscriptionRecord> {
  const moved = await tx.subscriptions.updateAtVersion(
    subscription.siteId,
    subscription.id,
    subscription.version,
    patch,
  );
  if (!moved) throw new BillingError('conflict', 'The subscription was changed by another request; try again.');
  return moved;
}

/**
 * Changes a subscription's product without proration, inside a command: at once (a new product
 * or version from the next renewal's price on, recording `subscription_product_change`), or
 * delayed to the next renewal (`delayed`), or clears a delayed change (`productId: null`).
 * Returns the subscription as written.
 */
export async function changeProductInCommand(
  ctx: CommandContext,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  input: ProductChangeInput | { delayed: true; productId: null },
): Promise<SubscriptionRecord> {
  const id = subscription.id;
  if (!['active', 'trialing', 'past_due', 'soft_failure', 'unpaid'].includes(subscription.state)) {
    throw new BillingError(
      'invalid_transition',
      `The product of a subscription that is ${subscription.state} cannot be changed.`,
    );
  }
  if (input.delayed && input.productId === null) {
    const { nextProductId: _cleared, ...data } = subscription.data;
    return writeAtVersion(ctx.tx, subscription, { data, updatedAt: ctx.now });
  }
  const target = await findTarget(ctx.tx, site.id, input as ProductChangeInput);
  if (target.product.id === subscription.productId && target.version.version === subscription.productVersion) {
    throw invalid('Product: the subscription is already on this product.');
  }
  if (input.delayed) {
    return writeAtVersion(ctx.tx, subscription, {
      data: { ...subscription.data, nextProductId: target.product.id },
      updatedAt: ctx.now,
    });
  }
  const moved = await writeAtVersion(ctx.tx, subscription, {
    productId: target.product.id,
    productVersion: target.version.version,
    updatedAt: ctx.now,
  });
  ctx.record({
    siteId: site.id,
    key: 'subscription_product_change',
    subjectType: 'subscription',
    subjectId: id,
    payload: {
      previous_product: { id: subscription.productId },
      subscription: { id, product: { id: target.product.id, handle: target.product.handle } },
    },
  });
  return moved;
}

/** The product a change or migration targets, at the requested or current version. */
export async function findTarget(
  tx: StorageTransaction,
  siteId: number,
  input: { productHandle?: string; productId?: number; productVersion?: number },
): Promise<{ product: ProductRecord; version: ProductVersionRecord }> {
  const product =
    input.productId !== undefined
      ? await tx.catalog.findProduct(siteId, input.productId)
      : input.productHandle !== undefined
        ? await tx.catalog.findProductByHandle(siteId, input.productHandle)
        : undefined;
  if (!product) throw notFound('Product', input.productId ?? input.productHandle);
  if (product.archivedAt !== null) throw invalid('Product: has been archived.');
  const version = await tx.catalog.findProductVersion(
    siteId,
    product.id,
    input.productVersion ?? product.currentVersion,
  );
  if (!version)
    throw invalid(`Product version: ${input.productVersion} does not exist for this product.`, 'product_version');
  return { product, version };
}
