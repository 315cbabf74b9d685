import type { ProductView, SiteHandle, SubscriptionView } from 'billing-engine';
import type { InvoiceRecord } from '../../../src/invoices/model.js';
import { customerVisibleInvoices } from './portal-invoices.js';
import type { PortalComponent, PortalSubscription } from './portal-page.js';

// The engine's largest list page (larger pages are clamped to 200).
const PAGE_SIZE = 200;

/** Every subscription of one customer, page by page through the engine's customer filter. */
export async function customerSubscriptions(site: SiteHandle, customerId: number): Promise<SubscriptionView[]> {
  const found: SubscriptionView[] = [];
  for (let page = 1; ; page += 1) {
    const rows = await site.subscriptions.list({ customerId, page, perPage: PAGE_SIZE });
    found.push(...rows);
    if (rows.length < PAGE_SIZE) return found;
  }
}

/**
 * The products a subscription may change to on the portal: the other live (not archived) products
 * of its product family. Plan changes stay inside a family, as the service's portal keeps them.
 */
export async function planChoices(site: SiteHandle, view: SubscriptionView): Promise<ProductView[]> {
  const products = await site.catalog.listProducts({ familyId: view.product.product.familyId });
  return products.filter((choice) => choice.product.id !== view.product.product.id);
}

/**
 * The components a customer may allocate on the portal for a subscription: the family's
 * quantity-based and on/off components (metered ones are billed by usage, not chosen), each with
 * the subscription's current quantity (0 when it has none yet).
 */
export async function portalComponents(site: SiteHandle, view: SubscriptionView): Promise<PortalComponent[]> {
  const [family, current] = await Promise.all([
    site.components.list({ familyId: view.product.product.familyId }),
    site.allocations.listComponents(view.subscription.id),
  ]);
  const quantities = new Map(current.map((row) => [row.component.id, row.subscriptionComponent.allocatedQuantity]));
  return family
    .filter(({ component }) => component.kind !== 'metered_component')
    .map(({ component }) => ({ component, quantity: quantities.get(component.id) ?? 0 }));
}

/** A subscription's invoices as its customer sees them (issued ones, newest first), page by page. */
export async function portalInvoices(site: SiteHandle, subscriptionId: number): Promise<InvoiceRecord[]> {
  const found: InvoiceRecord[] = [];
  for (let page = 1; ; page += 1) {
    const { invoices } = await site.invoices.list({ subscriptionId, page, perPage: PAGE_SIZE, direction: 'desc' });
    found.push(...invoices);
    if (invoices.length < PAGE_SIZE) return customerVisibleInvoices(found);
  }
}

/** Everything the portal page shows for each of a customer's subscriptions. */
export async function portalSubscriptions(site: SiteHandle, customerId: number): Promise<PortalSubscription[]> {
  const views = await customerSubscriptions(site, customerId);
  return Promise.all(
    views.map(async (view) => ({
      view,
      plans: await planChoices(site, view),
      components: await portalComponents(site, view),
      invoices: await portalInvoices(site, view.subscription.id),
    })),
  );
}
