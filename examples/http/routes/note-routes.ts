import type { Hono } from 'hono';
import { type HttpAppEnv, idParam, JSON_SEGMENT, readJsonBody, sendJson, wireContext } from '../http-context.js';
import { noteRequest, pageOf, pageQuery, parseWireRequest, serializeNote, uniquenessTokenOf } from '../wire-bridge.js';
import { queryOf } from './route-params.js';

/** Notes on a subscription: create, list, read, update and delete. */
export function registerNoteRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/subscriptions/:id/notes.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const body = await readJsonBody(c);
    const input = { ...parseWireRequest(noteRequest, body), ...uniquenessTokenOf(body) };
    const note = await c.var.site.notes.create(id, input);
    return sendJson(201, serializeNote(note, await wireContext(c)));
  });

  app.get('/subscriptions/:id/notes.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const page = pageQuery.parse(queryOf(c));
    const notes = await c.var.site.notes.list(id);
    const context = await wireContext(c);
    return sendJson(
      200,
      pageOf(notes, page).map((note) => serializeNote(note, context)),
    );
  });

  app.get(`/subscriptions/:id/notes/:note_id${JSON_SEGMENT}`, async (c) => {
    const note = await c.var.site.notes.get(idParam(c, 'id', 'Subscription'), idParam(c, 'note_id', 'Note'));
    return sendJson(200, serializeNote(note, await wireContext(c)));
  });

  app.put(`/subscriptions/:id/notes/:note_id${JSON_SEGMENT}`, async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const noteId = idParam(c, 'note_id', 'Note');
    const body = await readJsonBody(c);
    const input = { ...parseWireRequest(noteRequest, body), ...uniquenessTokenOf(body) };
    const note = await c.var.site.notes.update(id, noteId, input);
    return sendJson(200, serializeNote(note, await wireContext(c)));
  });

  // The service answers with an empty body; clients must never get one, so `{}` it is.
  app.delete(`/subscriptions/:id/notes/:note_id${JSON_SEGMENT}`, async (c) => {
    await c.var.site.notes.delete(idParam(c, 'id', 'Subscription'), idParam(c, 'note_id', 'Note'));
    return sendJson(200, {});
  });
}
