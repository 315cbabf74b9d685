/**
 * Network test doubles for the webhook sender. {@link ConnectionObserver} watches the outgoing TCP
 * connections this process makes (`net.connect`, which node:http uses) while installed, so a test
 * can prove where a client connects without letting anything leave the machine (node:tls makes its
 * sockets without the channel: use plain HTTP URLs with it). {@link ScriptedResolver} answers
 * hostnames from a script, so no test resolves a real name.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { isIP, type Socket } from 'node:net';

/** An address a socket's lookup handed it for a hostname, right before connecting. */
export interface ObservedLookup {
  readonly host: string;
  readonly address: string;
  /** False when the observer stopped the socket here, before any packet was sent. */
  readonly allowed: boolean;
}

/** A connection that was actually started. */
export interface ObservedConnection {
  readonly address: string;
  readonly port: number;
}

/** The error a stopped socket fails with: the sender records it as `Connection failed: BLOCKED_BY_TEST`. */
export const BLOCKED = 'BLOCKED_BY_TEST';

export class ConnectionObserver {
  readonly lookups: ObservedLookup[] = [];
  readonly connections: ObservedConnection[] = [];
  readonly #hosts: ReadonlySet<string>;
  readonly #allow: (host: string, address: string) => boolean;

  /**
   * Watches the sockets whose lookup is for one of `hosts` (made-up names; every other socket,
   * a database client's say, is left alone). `allow` decides, per hostname and address, whether a
   * watched socket may go on and connect; every other one is destroyed in its `lookup` event,
   * which net emits after the lookup answered and before it connects (and it checks for a
   * destroyed socket right after). Default: allow none.
   */
  constructor(hosts: readonly string[], allow: (host: string, address: string) => boolean = () => false) {
    this.#hosts = new Set(hosts);
    this.#allow = allow;
  }

  readonly #onSocket = (message: unknown): void => {
    const socket = (message as { socket: Socket }).socket;
    let watched = false;
    socket.on('lookup', (error: Error | null, address: string | undefined, _family: unknown, host: string) => {
      if (error !== null || address === undefined || !this.#hosts.has(host)) return;
      watched = true;
      const allowed = this.#allow(host, address);
      this.lookups.push({ host, address, allowed });
      if (!allowed) socket.destroy(Object.assign(new Error(`test blocked ${host} -> ${address}`), { code: BLOCKED }));
    });
    socket.on('connectionAttempt', (address: string, port: number) => {
      if (watched) this.connections.push({ address, port });
    });
  };

  install(): this {
    subscribe('net.client.socket', this.#onSocket);
    return this;
  }

  uninstall(): void {
    unsubscribe('net.client.socket', this.#onSocket);
  }
}

/**
 * A resolver for the webhook sender that never touches DNS: each name answers from a script, one
 * entry per call (the last one repeats), and every call is counted. A name not in the script fails
 * like `getaddrinfo` does (`ENOTFOUND`).
 */
export class ScriptedResolver {
  readonly calls: string[] = [];
  readonly #script: ReadonlyMap<string, readonly (readonly string[])[]>;

  constructor(script: Record<string, readonly (readonly string[])[]>) {
    this.#script = new Map(Object.entries(script));
  }

  /** How often `host` was asked for. */
  count(host: string): number {
    return this.calls.filter((call) => call === host).length;
  }

  readonly resolve = async (host: string): Promise<{ address: string; family: number }[]> => {
    const turn = this.count(host);
    this.calls.push(host);
    const answers = this.#script.get(host);
    if (answers === undefined || answers.length === 0) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host });
    }
    const answer = answers[Math.min(turn, answers.length - 1)]!;
    return answer.map((address) => ({ address, family: isIP(address) }));
  };
}
