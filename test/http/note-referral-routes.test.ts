import { describe, expect, it } from 'vitest';
import { seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { subscribeOverHttp } from './support/subscribe.js';

type NoteJson = { id: number; body: string; sticky: boolean; subscription_id: number; updated_at: string };

describe('HTTP notes', () => {
  const http = useHttpFixture();

  it('POST creates a note as the SDK sends it (201) with string timestamps', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/notes.json`,
      json: { note: { body: 'Called the customer', sticky: true } },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({
      note: {
        id: expect.any(Number),
        body: 'Called the customer',
        sticky: true,
        subscription_id: s.id,
        created_at: '2026-01-15T07:00:00-05:00',
        updated_at: '2026-01-15T07:00:00-05:00',
      },
    });
  });

  it('lists, reads, updates and deletes the notes of one subscription', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const ids: number[] = [];
    for (const body of ['one', 'two', 'three']) {
      const created = await http().as('acme', {
        method: 'POST',
        path: `/subscriptions/${s.id}/notes.json`,
        json: { note: { body } },
      });
      ids.push(created.json<{ note: NoteJson }>().note.id);
    }
    const list = await http().as('acme', { path: `/subscriptions/${s.id}/notes.json` });
    expect(list.status).toBe(200);
    expect(list.json<{ note: NoteJson }[]>().map((n) => n.note.body)).toEqual(['one', 'two', 'three']);
    const paged = await http().as('acme', { path: `/subscriptions/${s.id}/notes.json?per_page=2&page=2` });
    expect(paged.json<{ note: NoteJson }[]>().map((n) => n.note.body)).toEqual(['three']);
    const read = await http().as('acme', { path: `/subscriptions/${s.id}/notes/${ids[1]}.json` });
    expect(read.json()).toMatchObject({ note: { id: ids[1], body: 'two', sticky: false } });
    http().clock.advance({ minutes: 1 });
    const updated = await http().as('acme', {
      method: 'PUT',
      path: `/subscriptions/${s.id}/notes/${ids[1]}.json`,
      json: { note: { sticky: 'true' } },
    });
    expect(updated.status).toBe(200);
    expect(updated.json()).toMatchObject({
      note: { body: 'two', sticky: true, updated_at: '2026-01-15T07:01:00-05:00' },
    });
    const deleted = await http().as('acme', { method: 'DELETE', path: `/subscriptions/${s.id}/notes/${ids[0]}.json` });
    expect(deleted.status).toBe(200);
    expect(deleted.json()).toEqual({});
    const after = await http().as('acme', { path: `/subscriptions/${s.id}/notes.json` });
    expect(after.json<{ note: NoteJson }[]>().map((n) => n.note.id)).toEqual([ids[1], ids[2]]);
  });

  it('422 for a blank body; 404 for an unknown note or a note of another subscription; 409 for a repeated token', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const t = await subscribeOverHttp(http(), {
      customer_attributes: { first_name: 'B', last_name: 'C', email: 'b@c.co' },
    });
    const blank = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/notes.json`,
      json: { note: { body: '  ' } },
    });
    expect(blank.status).toBe(422);
    expect(blank.json()).toEqual({ errors: ['Body: cannot be blank.'] });
    const created = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/notes.json`,
      json: { note: { body: 'mine' }, uniqueness_token: 'note-1' },
    });
    const id = created.json<{ note: NoteJson }>().note.id;
    const repeat = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/notes.json`,
      json: { note: { body: 'mine' }, uniqueness_token: 'note-1' },
    });
    expect(repeat.status).toBe(409);
    expect(repeat.json()).toEqual({ errors: ['DuplicatePrevention::DuplicateSubmissionError'] });
    for (const [method, path] of [
      ['GET', `/subscriptions/${t.id}/notes/${id}.json`],
      ['PUT', `/subscriptions/${t.id}/notes/${id}.json`],
      ['DELETE', `/subscriptions/${t.id}/notes/${id}.json`],
      ['GET', `/subscriptions/${s.id}/notes/999.json`],
      ['GET', '/subscriptions/999/notes.json'],
      ['POST', '/subscriptions/999/notes.json'],
    ] as const) {
      const reply = await http().as('acme', { method, path, json: { note: { body: 'x' } } });
      expect(reply.status, `${method} ${path}`).toBe(404);
    }
    const still = await http().as('acme', { path: `/subscriptions/${s.id}/notes/${id}.json` });
    expect(still.json()).toMatchObject({ note: { body: 'mine' } });
  });
});

describe('HTTP referral codes', () => {
  const http = useHttpFixture();

  it('a subscription on a site with referrals shows its code as referral_code and ref, and the code validates', async () => {
    await seedCatalog(http().engine);
    await http().engine.sites.update('acme', { settings: { referralsEnabled: true } });
    const s = await subscribeOverHttp(http());
    const code = s.body.referral_code;
    expect(code).toEqual(expect.stringMatching(/^[A-Z2-9]{8}$/));
    expect(s.body.ref).toBe(code);
    const site = await http().engine.site('acme').info();
    for (const sent of [String(code), String(code).toLowerCase()]) {
      const reply = await http().as('acme', { path: `/referral_codes/validate.json?code=${sent}` });
      expect(reply.status, sent).toBe(200);
      expect(reply.json(), sent).toEqual({
        referral_code: { id: s.id, site_id: site.id, subscription_id: s.id, code },
      });
    }
  });

  it('an unknown or missing code is a 404 whose errors is a string; without referrals there is no ref', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    expect(s.body.referral_code).toBeNull();
    expect(s.body).not.toHaveProperty('ref');
    for (const path of [
      '/referral_codes/validate.json?code=NOPE-x',
      '/referral_codes/validate.json',
      '/referral_codes/validate.json?code[]=A',
    ]) {
      const reply = await http().as('acme', { path });
      expect(reply.status, path).toBe(404);
      expect(reply.json(), path).toEqual({ errors: 'Invalid referral code.' });
    }
  });
});
