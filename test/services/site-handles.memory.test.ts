import { createBillingEngine, ManualClock } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { describe, expect, it } from 'vitest';

/**
 * Site handles are built once per subdomain and shared. They hold no site data, so a shared
 * handle must see every edit, deletion and re-creation of its site at once.
 */
describe('site handles', () => {
  const setup = async () => {
    const engine = createBillingEngine({
      storage: createMemoryStorage(),
      clock: new ManualClock('2026-01-15T12:00:00Z'),
    });
    await engine.migrate();
    return engine;
  };

  it('are shared per subdomain (any case) and cannot be changed', async () => {
    const engine = await setup();
    const { apiKey } = await engine.sites.create({ subdomain: 'shared', currency: 'USD' });
    const handle = engine.site('shared');
    expect(engine.site('SHARED')).toBe(handle);
    expect(await engine.authenticate('shared', apiKey)).toBe(handle);
    expect(Object.isFrozen(handle)).toBe(true);
    expect(Object.isFrozen(handle.subscriptions)).toBe(true);
    expect(() => {
      (handle.catalog as { listFamilies: unknown }).listFamilies = () => [];
    }).toThrow(TypeError);
  });

  it('see edits, deletion and re-creation of their site at once', async () => {
    const engine = await setup();
    await engine.sites.create({ subdomain: 'live', currency: 'USD', timeZone: 'UTC' });
    const handle = engine.site('live');
    await engine.sites.update('live', { timeZone: 'Europe/Berlin' });
    expect((await handle.info()).timeZone).toBe('Europe/Berlin');
    await engine.sites.delete('live');
    await expect(handle.info()).rejects.toMatchObject({ code: 'not_found' });
    const { apiKey } = await engine.sites.create({ subdomain: 'live', currency: 'EUR' });
    expect((await handle.info()).currency).toBe('EUR');
    expect(await engine.authenticate('live', apiKey)).toBe(handle);
  });
});
