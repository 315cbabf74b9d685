// An ESM app that mounts billing-engine/http in a plain Node http server and under /billing in an
// Express app, makes one real request to each, and prints what came back.
import { once } from 'node:events';
import { createServer, get } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { createBillingEngine } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { createHttpHandler } from 'billing-engine/http';
import express from 'express';

const engine = createBillingEngine({ storage: createMemoryStorage() });
await engine.migrate();
const { apiKey } = await engine.sites.create({ subdomain: 'acme', currency: 'USD' });
await engine.site('acme').catalog.createFamily({ name: 'Plans' });
const listener = getRequestListener(createHttpHandler({ engine }));

async function families(server, prefix) {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  try {
    // node:http rather than fetch, which does not let a caller set Host (the site comes from it).
    const response = await new Promise((resolve, reject) => {
      const headers = { host: `acme.localhost:${port}`, authorization: `Basic ${btoa(`${apiKey}:x`)}` };
      get({ host: '127.0.0.1', port, path: `${prefix}/product_families.json`, headers }, resolve).on('error', reject);
    });
    let text = '';
    for await (const chunk of response) text += chunk;
    const body = JSON.parse(text);
    return { status: response.statusCode, names: body.map((entry) => entry.product_family.name) };
  } finally {
    server.close();
  }
}

const app = express();
app.get('/hello', (_request, response) => response.send('hello from express'));
app.use('/billing', listener);

console.log(
  JSON.stringify({
    module: typeof require === 'undefined' ? 'esm' : 'cjs',
    node: await families(createServer(listener), ''),
    express: await families(createServer(app), '/billing'),
  }),
);
