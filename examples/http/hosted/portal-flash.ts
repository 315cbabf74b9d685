import { createHmac, randomBytes } from 'node:crypto';
import { constantTimeEqual } from 'billing-engine/chargify';
import type { PortalFlash } from './portal-page.js';

/** The cookie that carries a portal action's outcome across its 303 redirect. */
export const PORTAL_FLASH_COOKIE = 'portal_flash';

/** How long a flash is good for, in seconds (the cookie's Max-Age and the expiry it is signed with). */
export const FLASH_LIFETIME_SECONDS = 60;

/** The shortest flash secret accepted: 32 bytes (or characters). */
export const MIN_FLASH_SECRET_LENGTH = 32;

// Bounds so that a message can never grow the cookie past what browsers keep (about 4 KB).
const MAX_MESSAGES = 5;
const MAX_MESSAGE_LENGTH = 300;

/** The key flash cookies are signed with: configured, or random per app instance. */
export type FlashSecret = string | Uint8Array;

/** A random 32-byte secret, made once per app instance when none is configured. */
export function createFlashSecret(): Uint8Array {
  return randomBytes(32);
}

/** Refuses a secret too short to sign with (a RangeError at startup, not a weak cookie later). */
export function checkFlashSecret(secret: FlashSecret): FlashSecret {
  if (secret.length < MIN_FLASH_SECRET_LENGTH)
    throw new RangeError(`the flash secret must be at least ${MIN_FLASH_SECRET_LENGTH} bytes long`);
  return secret;
}

// The MAC covers the cookie's path too, so that a flash made for one portal link means nothing on another.
function mac(secret: FlashSecret, path: string, payload: string): string {
  return createHmac('sha256', secret).update(`${PORTAL_FLASH_COOKIE}|${path}|${payload}`, 'utf8').digest('base64url');
}

function bounded(messages: readonly string[]): string[] {
  return messages.slice(0, MAX_MESSAGES).map((message) => message.slice(0, MAX_MESSAGE_LENGTH));
}

/**
 * The `Set-Cookie` value that carries `flash` to the next GET of the portal page at `path`. Scoped
 * to the link's path (so it goes nowhere else), HttpOnly, SameSite=Lax, and short-lived: it is a
 * message for the very next page view, not state. The value is `{payload}.{mac}`, both base64url
 * (no quoting needed): the payload is the JSON message with its expiry, and the MAC an HMAC-SHA256
 * with the app's secret over the path and the payload, so that nobody can make the page show a
 * message the server did not write.
 */
export function flashCookie(flash: PortalFlash, path: string, secure: boolean, secret: FlashSecret, now: Date): string {
  const expires = Math.floor(now.getTime() / 1000) + FLASH_LIFETIME_SECONDS;
  const payload = Buffer.from(
    JSON.stringify({ kind: flash.kind, messages: bounded(flash.messages), expires }),
    'utf8',
  ).toString('base64url');
  const value = `${payload}.${mac(secret, path, payload)}`;
  return `${PORTAL_FLASH_COOKIE}=${value}; Path=${path}; Max-Age=${FLASH_LIFETIME_SECONDS}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/** The `Set-Cookie` value that removes the flash once the page has shown it. */
export function clearFlashCookie(path: string): string {
  return `${PORTAL_FLASH_COOKIE}=; Path=${path}; Max-Age=0; HttpOnly; SameSite=Lax`;
}

/**
 * Reads a flash cookie's value for the page at `path`. Only a value this app signed for this path,
 * not yet expired at `now`, is a flash: a forged, altered, moved or stale one is ignored
 * (undefined), never an error page. The MAC is compared in constant time before the payload is read.
 */
export function readFlash(
  value: string | undefined,
  path: string,
  secret: FlashSecret,
  now: Date,
): PortalFlash | undefined {
  if (value === undefined || value === '') return undefined;
  const dot = value.indexOf('.');
  if (dot <= 0) return undefined;
  const payload = value.slice(0, dot);
  if (!constantTimeEqual(mac(secret, path, payload), value.slice(dot + 1))) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { kind, messages, expires } = parsed as { kind?: unknown; messages?: unknown; expires?: unknown };
    if (kind !== 'notice' && kind !== 'error') return undefined;
    if (typeof expires !== 'number' || now.getTime() >= expires * 1000) return undefined;
    if (!Array.isArray(messages) || !messages.every((m): m is string => typeof m === 'string')) return undefined;
    return { kind, messages: bounded(messages) };
  } catch {
    return undefined;
  }
}
