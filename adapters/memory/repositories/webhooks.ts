import type { WebhooksRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Webhook endpoints and deliveries over the memory tables. */
export function memoryWebhooks(state: MemoryState, journal: Journal): WebhooksRepository {
  return {
    async insertEndpoint(endpoint) {
      return state.webhookEndpoints.insert(journal, { ...endpoint, id: state.webhookEndpoints.nextId() });
    },
    async findEndpoint(siteId, id) {
      const endpoint = state.webhookEndpoints.get(id);
      return endpoint?.siteId === siteId ? endpoint : undefined;
    },
    async listEndpoints(siteId) {
      return state.webhookEndpoints.filter((e) => e.siteId === siteId);
    },
    async updateEndpoint(siteId, id, patch) {
      const endpoint = state.webhookEndpoints.get(id);
      if (endpoint === undefined || endpoint.siteId !== siteId) return undefined;
      return state.webhookEndpoints.replace(journal, { ...endpoint, ...patch });
    },
    async deleteEndpoint(siteId, id) {
      const endpoint = state.webhookEndpoints.peek(id);
      if (endpoint === undefined || endpoint.siteId !== siteId) return false;
      state.webhooks.deleteWhere(journal, (w) => w.siteId === siteId && w.endpointId === id);
      return state.webhookEndpoints.delete(journal, id);
    },
    async countFailure(siteId, id, now) {
      const endpoint = state.webhookEndpoints.get(id);
      if (endpoint === undefined || endpoint.siteId !== siteId) return undefined;
      return state.webhookEndpoints.replace(journal, {
        ...endpoint,
        failureCount: endpoint.failureCount + 1,
        updatedAt: now,
      });
    },
    async insertWebhook(webhook) {
      return state.webhooks.insert(journal, { ...webhook, id: state.webhooks.nextId() });
    },
    async findWebhook(siteId, id) {
      const webhook = state.webhooks.get(id);
      return webhook?.siteId === siteId ? webhook : undefined;
    },
    async updateWebhook(siteId, id, patch) {
      const webhook = state.webhooks.get(id);
      if (webhook === undefined || webhook.siteId !== siteId) return undefined;
      return state.webhooks.replace(journal, { ...webhook, ...patch });
    },
    async listWebhooks(siteId, filter, page) {
      return state.webhooks
        .filter(
          (w) =>
            w.siteId === siteId &&
            (filter.status === undefined || w.status === filter.status) &&
            (filter.endpointId === undefined || w.endpointId === filter.endpointId) &&
            (filter.since === undefined || w.createdAt.getTime() >= filter.since.getTime()) &&
            (filter.until === undefined || w.createdAt.getTime() <= filter.until.getTime()),
        )
        .sort((a, b) => b.id - a.id)
        .slice((page.page - 1) * page.perPage, page.page * page.perPage);
    },
  };
}
