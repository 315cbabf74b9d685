/**
 * The webhook sender on its own (no storage): one lookup per send through the injected resolver,
 * every address judged, and the connection made to the checked address with the hostname kept for
 * `Host` and TLS SNI. Names are made up (`hooks.example.test`) and answered by a ScriptedResolver;
 * every outgoing connection is watched and anything but the loopback receiver is stopped before it
 * connects, so nothing leaves the machine.
 */
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sendWebhook, type WebhookResolver, type WebhookSendOptions } from '../../src/services/webhook-sender.js';
import { BLOCKED, ConnectionObserver, ScriptedResolver } from '../support/connection-observer.js';
import { ok, Receiver } from '../support/loopback-receiver.js';

const BODY = 'id=1&event=test&payload[chargify]=testing';
const HEADERS = { 'Content-Type': 'application/x-www-form-urlencoded' };
/** Names whose answers are refused even with loopback allowed. */
const TRANSITION_ANSWERS: Record<string, string[]> = {
  'mapped.example.test': ['::ffff:127.0.0.1'],
  'nat64.example.test': ['64:ff9b::7f00:1'],
  'sixtofour.example.test': ['2002:7f00:1::1'],
  'private.example.test': ['10.0.0.1'],
  'mixed.example.test': ['127.0.0.1', '192.168.1.1'],
  'metadata.example.test': ['169.254.169.254'],
};
const TRANSITION_HOSTS = Object.keys(TRANSITION_ANSWERS);

describe('webhook sender: where it connects', () => {
  let receiver: Receiver;
  let port: number;
  let observer: ConnectionObserver;

  beforeEach(async () => {
    receiver = await new Receiver(ok).start();
    port = Number(new URL(receiver.url).port);
    // Only the loopback receiver's port may be reached; everything else is stopped at its lookup.
    observer = new ConnectionObserver(
      ['hooks.example.test', ...TRANSITION_HOSTS],
      (_host, address) => address === '127.0.0.1',
    ).install();
  });
  afterEach(async () => {
    observer.uninstall();
    await receiver.stop();
  });

  const options = (resolve: WebhookResolver, allowLoopback: boolean): WebhookSendOptions => ({
    resolve,
    allowLoopback,
    timeoutMs: 2000,
    maxResponseBytes: 4096,
  });

  it('connects a made-up name to the loopback address it checked, only with loopback allowed', async () => {
    const dns = new ScriptedResolver({ 'hooks.example.test': [['127.0.0.1']] });
    const url = `http://hooks.example.test:${port}/hook?x=1`;
    expect(await sendWebhook({ url, body: BODY, headers: HEADERS }, options(dns.resolve, true))).toEqual({
      accepted: true,
      status: 200,
    });
    expect(receiver.hits).toHaveLength(1);
    expect(receiver.hits[0]).toMatchObject({ body: BODY, path: '/hook?x=1' });
    // The request still names the host it was sent to: the pinning is invisible to the receiver.
    expect(receiver.hits[0]!.headers.host).toBe(`hooks.example.test:${port}`);
    expect(receiver.hits[0]!.headers['content-length']).toBe(String(BODY.length));
    expect(observer.lookups).toEqual([{ host: 'hooks.example.test', address: '127.0.0.1', allowed: true }]);
    expect(observer.connections).toEqual([{ address: '127.0.0.1', port }]);
    expect(dns.calls).toEqual(['hooks.example.test']);

    expect(await sendWebhook({ url, body: BODY, headers: HEADERS }, options(dns.resolve, false))).toEqual({
      accepted: false,
      status: null,
      error:
        'Destination refused: hooks.example.test resolves to 127.0.0.1 (loopback; loopback needs the allowLocalReceivers engine option on a test-mode site).',
    });
    expect(receiver.hits).toHaveLength(1);
    expect(observer.connections).toHaveLength(1);
    expect(dns.calls).toEqual(['hooks.example.test', 'hooks.example.test']);
  });

  it('never looks up twice: a public first answer and a loopback second answer never reach loopback', async () => {
    // Loopback is even allowed here, so a second lookup would connect to the receiver and succeed.
    const dns = new ScriptedResolver({ 'hooks.example.test': [['93.184.216.34'], ['127.0.0.1']] });
    const result = await sendWebhook(
      { url: `http://hooks.example.test:${port}/`, body: BODY, headers: HEADERS },
      options(dns.resolve, true),
    );
    expect(result).toEqual({ accepted: false, status: null, error: `Connection failed: ${BLOCKED}` });
    expect(dns.calls).toEqual(['hooks.example.test']);
    expect(observer.lookups).toEqual([{ host: 'hooks.example.test', address: '93.184.216.34', allowed: false }]);
    expect(observer.connections).toEqual([]);
    expect(receiver.hits).toHaveLength(0);
  });

  it('refuses every transition or private answer even with loopback allowed, before any socket', async () => {
    const dns = new ScriptedResolver(Object.fromEntries(Object.entries(TRANSITION_ANSWERS).map(([k, v]) => [k, [v]])));
    for (const host of TRANSITION_HOSTS) {
      const result = await sendWebhook(
        { url: `http://${host}:${port}/`, body: BODY, headers: HEADERS },
        options(dns.resolve, true),
      );
      expect(result.accepted, host).toBe(false);
      expect(!result.accepted && result.error, host).toMatch(new RegExp(`^Destination refused: ${host} resolves to `));
    }
    expect(observer.lookups).toEqual([]);
    expect(receiver.hits).toHaveLength(0);
  });

  it('turns resolver failures, junk answers and a hanging resolver into results, never a throw', async () => {
    const url = `http://hooks.example.test:${port}/`;
    const send = (resolve: WebhookResolver, timeoutMs = 2000) =>
      sendWebhook({ url, body: BODY, headers: HEADERS }, { ...options(resolve, true), timeoutMs });
    expect(await send(new ScriptedResolver({}).resolve)).toEqual({
      accepted: false,
      status: null,
      error: 'Connection failed: ENOTFOUND',
    });
    const throwsAtOnce: WebhookResolver = () => {
      throw new Error('resolver exploded');
    };
    expect(await send(throwsAtOnce)).toMatchObject({ error: 'Connection failed: resolver exploded' });
    expect(await send(async () => 'nonsense' as never)).toMatchObject({
      error: 'Destination refused: hooks.example.test has no address.',
    });
    expect(await send(async () => [{ address: 'localhost', family: 4 }])).toMatchObject({
      error: "Destination refused: hooks.example.test resolves to 'localhost', not an IP address.",
    });
    expect(await send(() => new Promise(() => undefined), 100)).toEqual({
      accepted: false,
      status: null,
      error: 'Timed out after 100 ms',
    });
    expect(receiver.hits).toHaveLength(0);
    expect(observer.lookups).toEqual([]);
  });
});

describe('webhook sender: TLS', () => {
  let server: TlsServer;
  const servernames: string[] = [];

  beforeEach(async () => {
    servernames.length = 0;
    // No certificate at all: the server only records the name the client asks for (SNI), then
    // ends the handshake. No key material is needed for that.
    server = createTlsServer({
      SNICallback: (name, callback) => {
        servernames.push(name);
        callback(new Error('no certificate here'), undefined);
      },
    });
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterEach(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('connects to the checked address and still asks for the hostname (SNI) in the handshake', async () => {
    const port = (server.address() as AddressInfo).port;
    const dns = new ScriptedResolver({ 'hooks.example.test': [['127.0.0.1'], ['10.0.0.1']] });
    const result = await sendWebhook(
      { url: `https://hooks.example.test:${port}/`, body: BODY, headers: HEADERS },
      { resolve: dns.resolve, allowLoopback: true, timeoutMs: 2000, maxResponseBytes: 4096 },
    );
    // The handshake reached our server on 127.0.0.1 (the resolver's first answer; node's own DNS
    // knows no such name) and named the URL's host, so the certificate would be checked against it.
    expect(servernames).toEqual(['hooks.example.test']);
    expect(result).toMatchObject({ accepted: false, status: null });
    expect(!result.accepted && result.error).toMatch(/^Connection failed: /);
    expect(dns.calls).toEqual(['hooks.example.test']);
  });
});
