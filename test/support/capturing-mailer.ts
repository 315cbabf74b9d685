import type { Mailer, MailMessage } from 'billing-engine';

/** A mailer that keeps what it is given and fails the next `failures` sends. */
export function capturingMailer(): {
  mailer: Mailer;
  sent: MailMessage[];
  calls: () => number;
  failNext(n: number): void;
  clear(): void;
} {
  const sent: MailMessage[] = [];
  let failures = 0;
  let calls = 0;
  return {
    sent,
    calls: () => calls,
    failNext(n) {
      failures = n;
    },
    clear() {
      sent.length = 0;
      failures = 0;
      calls = 0;
    },
    mailer: {
      async send(message) {
        calls += 1;
        if (failures > 0) {
          failures -= 1;
          throw new Error('relay unavailable');
        }
        sent.push(message);
      },
    },
  };
}
