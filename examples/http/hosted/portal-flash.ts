import type { PortalFlash } from './portal-page.js';

/** The cookie that carries a portal action's outcome across its 303 redirect. */
export const PORTAL_FLASH_COOKIE = 'portal_flash';

// Bounds so that a message can never grow the cookie past what browsers keep (about 4 KB).
const MAX_MESSAGES = 5;
const MAX_MESSAGE_LENGTH = 300;

/**
 * The `Set-Cookie` value that carries `flash` to the next GET of the portal page. Scoped to the
 * link's path (so it goes nowhere else), HttpOnly, SameSite=Lax, and short-lived: it is a message
 * for the very next page view, not state. The value is base64url JSON, so it needs no quoting.
 * The customer can edit their own cookie, but the page escapes it like everything else.
 */
export function flashCookie(flash: PortalFlash, path: string, secure: boolean): string {
  const bounded: PortalFlash = {
    kind: flash.kind,
    messages: flash.messages.slice(0, MAX_MESSAGES).map((message) => message.slice(0, MAX_MESSAGE_LENGTH)),
  };
  const value = Buffer.from(JSON.stringify(bounded), 'utf8').toString('base64url');
  return `${PORTAL_FLASH_COOKIE}=${value}; Path=${path}; Max-Age=60; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/** The `Set-Cookie` value that removes the flash once the page has shown it. */
export function clearFlashCookie(path: string): string {
  return `${PORTAL_FLASH_COOKIE}=; Path=${path}; Max-Age=0; HttpOnly; SameSite=Lax`;
}

/** Reads a flash cookie's value; anything malformed is ignored (undefined), never an error page. */
export function readFlash(value: string | undefined): PortalFlash | undefined {
  if (value === undefined || value === '') return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { kind, messages } = parsed as { kind?: unknown; messages?: unknown };
    if (kind !== 'notice' && kind !== 'error') return undefined;
    if (!Array.isArray(messages) || !messages.every((m): m is string => typeof m === 'string')) return undefined;
    return {
      kind,
      messages: messages.slice(0, MAX_MESSAGES).map((message) => message.slice(0, MAX_MESSAGE_LENGTH)),
    };
  } catch {
    return undefined;
  }
}
