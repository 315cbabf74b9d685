import type { Hono } from 'hono';
import { type HttpAppEnv, idParam, JSON_SEGMENT, readJsonBody, sendJson, wireContext } from '../http-context.js';
import { pageQuery, parseWireRequest, reasonCodeRequest, serializeReasonCode } from '../wire-bridge.js';
import { queryOf } from './route-params.js';

/** Churn reason codes: create, list, read, update and delete. */
export function registerReasonCodeRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/reason_codes.json', async (c) => {
    const input = parseWireRequest(reasonCodeRequest, await readJsonBody(c));
    const code = await c.var.site.reasonCodes.create(input);
    return sendJson(201, serializeReasonCode(code, await wireContext(c)));
  });

  app.get('/reason_codes.json', async (c) => {
    const codes = await c.var.site.reasonCodes.list(pageQuery.parse(queryOf(c)));
    const context = await wireContext(c);
    return sendJson(
      200,
      codes.map((code) => serializeReasonCode(code, context)),
    );
  });

  app.get(`/reason_codes/:id${JSON_SEGMENT}`, async (c) => {
    const code = await c.var.site.reasonCodes.get(idParam(c, 'id', 'Reason code'));
    return sendJson(200, serializeReasonCode(code, await wireContext(c)));
  });

  app.put(`/reason_codes/:id${JSON_SEGMENT}`, async (c) => {
    const id = idParam(c, 'id', 'Reason code');
    const input = parseWireRequest(reasonCodeRequest, await readJsonBody(c));
    const code = await c.var.site.reasonCodes.update(id, input);
    return sendJson(200, serializeReasonCode(code, await wireContext(c)));
  });

  // The SDK reads `{"ok":"ok"}` (OkResponse) from this delete.
  app.delete(`/reason_codes/:id${JSON_SEGMENT}`, async (c) => {
    await c.var.site.reasonCodes.delete(idParam(c, 'id', 'Reason code'));
    return sendJson(200, { ok: 'ok' });
  });
}
