import { BillingError, type CustomerFilter, type CustomerRecord, type CustomersRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Customers and payment profiles over the memory tables. */
export function memoryCustomers(state: MemoryState, journal: Journal): CustomersRepository {
  const referenceTaken = (siteId: number, reference: string | null | undefined, exceptId?: number) =>
    reference != null &&
    state.customers.count((c) => c.siteId === siteId && c.reference === reference && c.id !== exceptId) > 0;
  return {
    async insert(customer) {
      if (referenceTaken(customer.siteId, customer.reference))
        throw new BillingError('conflict', 'Reference is already taken.');
      return state.customers.insert(journal, { ...customer, id: state.customers.nextId(), version: 1 });
    },
    async findById(siteId, id) {
      const customer = state.customers.get(id);
      return customer?.siteId === siteId ? customer : undefined;
    },
    async findByReference(siteId, reference) {
      return state.customers.find((c) => c.siteId === siteId && c.reference === reference);
    },
    async updateAtVersion(siteId, id, expectedVersion, patch) {
      const current = state.customers.get(id);
      if (current === undefined || current.siteId !== siteId || current.version !== expectedVersion) return undefined;
      if (referenceTaken(siteId, patch.reference, id))
        throw new BillingError('conflict', 'Reference is already taken.');
      return state.customers.replace(journal, { ...current, ...patch, id, siteId, version: current.version + 1 });
    },
    async list(siteId, page, filter = {}) {
      const all = state.customers.filter((c) => c.siteId === siteId && customerMatches(c, filter));
      all.sort((a, b) => (filter.direction === 'desc' ? b.id - a.id : a.id - b.id));
      return all.slice((page.page - 1) * page.perPage, page.page * page.perPage);
    },
    async delete(siteId, id) {
      const customer = state.customers.peek(id);
      if (customer === undefined || customer.siteId !== siteId) return false;
      if (state.subscriptions.count((s) => s.siteId === siteId && s.customerId === id) > 0) {
        throw new BillingError('conflict', 'The customer has subscriptions.');
      }
      state.paymentProfiles.deleteWhere(journal, (p) => p.siteId === siteId && p.customerId === id);
      return state.customers.delete(journal, id);
    },
    async insertPaymentProfile(profile) {
      return state.paymentProfiles.insert(journal, { ...profile, id: state.paymentProfiles.nextId() });
    },
    async findPaymentProfile(siteId, id) {
      const profile = state.paymentProfiles.get(id);
      return profile?.siteId === siteId ? profile : undefined;
    },
    async listPaymentProfiles(siteId, filter, page) {
      const all = state.paymentProfiles.filter(
        (p) => p.siteId === siteId && (filter.customerId === undefined || p.customerId === filter.customerId),
      );
      all.sort((a, b) => a.id - b.id);
      return all.slice((page.page - 1) * page.perPage, page.page * page.perPage);
    },
    async deletePaymentProfile(siteId, id) {
      const profile = state.paymentProfiles.peek(id);
      if (profile === undefined || profile.siteId !== siteId) return false;
      // As the SQL foreign key from subscriptions: a profile in use is not deleted.
      if (state.subscriptions.count((s) => s.siteId === siteId && s.paymentProfileId === id) > 0) {
        throw new BillingError('conflict', 'The payment profile is in use by a subscription.');
      }
      return state.paymentProfiles.delete(journal, id);
    },
    async updatePaymentProfile(siteId, id, patch) {
      const current = state.paymentProfiles.get(id);
      if (current === undefined || current.siteId !== siteId) return undefined;
      return state.paymentProfiles.replace(journal, { ...current, ...patch, id, siteId });
    },
  };
}

/** Whether a customer passes a list filter (the SQL repository's `where`, in memory). */
function customerMatches(customer: CustomerRecord, filter: CustomerFilter): boolean {
  if (filter.search !== undefined) {
    const needle = filter.search.toLowerCase();
    const fields = [customer.firstName, customer.lastName, customer.email, customer.organization, customer.reference];
    const found = fields.some((field) => field?.toLowerCase().includes(needle));
    if (!found && !(/^\d+$/.test(filter.search) && Number(filter.search) === customer.id)) return false;
  }
  const at = filter.dateField === 'updated_at' ? customer.updatedAt : customer.createdAt;
  if (filter.start !== undefined && at.getTime() < filter.start.getTime()) return false;
  if (filter.end !== undefined && at.getTime() > filter.end.getTime()) return false;
  return true;
}
