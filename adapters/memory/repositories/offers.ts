/** Offers in memory. */
import { BillingError, type OfferRecord, type OffersRepository } from 'billing-engine';
import type { MemoryState, SiteOwnedTable } from '../memory-state.js';
import { type Journal, MemoryTable } from '../memory-table.js';

/** An index key, as `keyOf` of memory-state spells them (kept local: memory-state imports this file). */
function keyOf(...parts: readonly (string | number)[]): string {
  return parts.join('\u0000');
}

/** The offer table; `MemoryState` holds one. */
export class OfferTables {
  readonly offers = new MemoryTable<OfferRecord>();
  /** Offers by site and handle (unique). */
  readonly byHandle = this.offers.index((o) => keyOf(o.siteId, o.handle));

  /** Offers are catalog data: removed with the site, kept when its data is cleared (as products are). */
  siteOwned(): SiteOwnedTable[] {
    return [this.offers];
  }
}

/** Offers over `state.offerTables`. */
export function memoryOffers(state: MemoryState, journal: Journal): OffersRepository {
  const t = state.offerTables;
  const byHandle = (siteId: number, handle: string) =>
    t.offers.findIndexed(t.byHandle, keyOf(siteId, handle), (o) => o.siteId === siteId && o.handle === handle);
  return {
    async insert(offer) {
      if (byHandle(offer.siteId, offer.handle) !== undefined)
        throw new BillingError('conflict', 'Offer handle is already taken.');
      return t.offers.insert(journal, {
        ...offer,
        items: offer.items.map((item) => ({ ...item })),
        couponIds: [...offer.couponIds],
        id: t.offers.nextId(),
      });
    },
    async findById(siteId, id) {
      const found = t.offers.get(id);
      return found?.siteId === siteId ? found : undefined;
    },
    async findByHandle(siteId, handle) {
      return byHandle(siteId, handle);
    },
    async list(siteId, options) {
      const all = t.offers.filter(
        (o) => o.siteId === siteId && (options.includeArchived === true || o.archivedAt === null),
      );
      all.sort((a, b) => a.id - b.id);
      return all.slice(options.offset, options.offset + options.limit);
    },
    async setArchived(siteId, id, archivedAt, now) {
      const found = t.offers.get(id);
      if (found === undefined || found.siteId !== siteId) return undefined;
      return t.offers.replace(journal, { ...found, archivedAt, updatedAt: now });
    },
  };
}
