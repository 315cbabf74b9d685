import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_DATABASE, DEFAULT_HOST, parseUntil, readConfig, SETTINGS } from '../../bin/config.js';

const all = ['database', 'port', 'compat', 'workIntervalMs', 'allowLocalWebhooks'] as const;

// The CLI's one configuration module: defaults, precedence, and a one-line error for each bad value.
describe('CLI configuration', () => {
  it('uses the defaults when nothing is set, and an empty variable counts as unset', () => {
    const defaults = {
      database: DEFAULT_DATABASE,
      port: 3000,
      compat: 'spec',
      workIntervalMs: 5000,
      allowLocalWebhooks: false,
    };
    expect(readConfig(all, {}, {})).toEqual(defaults);
    expect(
      readConfig(
        all,
        {},
        {
          DATABASE_URL: '',
          PORT: '',
          BILLING_COMPAT: '',
          BILLING_WORK_INTERVAL_MS: '',
          BILLING_ALLOW_LOCAL_WEBHOOKS: '',
        },
      ),
    ).toEqual(defaults);
  });

  it('reads each setting from its one variable, and a flag wins over the variable', () => {
    const env = {
      DATABASE_URL: 'postgres://db/billing',
      PORT: '8080',
      BILLING_COMPAT: 'chargify',
      BILLING_WORK_INTERVAL_MS: '250',
      BILLING_ALLOW_LOCAL_WEBHOOKS: 'true',
    };
    expect(readConfig(all, {}, env)).toEqual({
      database: 'postgres://db/billing',
      port: 8080,
      compat: 'chargify',
      workIntervalMs: 250,
      allowLocalWebhooks: true,
    });
    expect(
      readConfig(all, { database: 'x.sqlite', port: '0', compat: 'spec', workIntervalMs: '10' }, env),
    ).toMatchObject({ database: 'x.sqlite', port: 0, compat: 'spec', workIntervalMs: 10 });
    // The old spelling of the server's variable is not a second name for the setting.
    expect(readConfig(['compat'], {}, { COMPAT: 'chargify' })).toEqual({ compat: 'spec' });
    expect(Object.values(SETTINGS).map((s) => s.env)).toEqual([
      'DATABASE_URL',
      'PORT',
      'BILLING_HOST',
      'BILLING_COMPAT',
      'BILLING_WORK_INTERVAL_MS',
      'BILLING_ALLOW_LOCAL_WEBHOOKS',
      'BILLING_PUBLIC_BASE_DOMAIN',
      'LOG_LEVEL',
      'LOG_FORMAT',
      'BILLING_METRICS_TOKEN',
      'BILLING_METRICS_PORT',
      'BILLING_WORK_BATCH_SIZE',
      'BILLING_SHUTDOWN_TIMEOUT_MS',
    ]);
  });

  it('refuses each bad value with one line naming where it came from and what is accepted', () => {
    const cases: [Parameters<typeof readConfig>, string][] = [
      [[['port'], {}, { PORT: 'abc' }], 'PORT="abc" is not valid: expected a port number from 0 to 65535.'],
      [[['port'], { port: '65536' }, {}], '--port "65536" is not valid: expected a port number from 0 to 65535.'],
      [[['port'], { port: '80.5' }, {}], '--port "80.5" is not valid: expected a port number from 0 to 65535.'],
      [[['compat'], { compat: 'bogus' }, {}], `--compat "bogus" is not valid: expected 'spec' or 'chargify'.`],
      [
        [['workIntervalMs'], {}, { BILLING_WORK_INTERVAL_MS: 'abc' }],
        'BILLING_WORK_INTERVAL_MS="abc" is not valid: expected a whole number of milliseconds from 10 to 86400000.',
      ],
      [
        [['workIntervalMs'], {}, { BILLING_WORK_INTERVAL_MS: '1' }],
        'BILLING_WORK_INTERVAL_MS="1" is not valid: expected a whole number of milliseconds from 10 to 86400000.',
      ],
      [
        [['allowLocalWebhooks'], {}, { BILLING_ALLOW_LOCAL_WEBHOOKS: 'yes' }],
        `BILLING_ALLOW_LOCAL_WEBHOOKS="yes" is not valid: expected '1' or 'true' to allow, '0' or 'false' to refuse.`,
      ],
    ];
    for (const [args, message] of cases) {
      expect(() => readConfig(...args)).toThrow(new ConfigError(message));
      expect(message).not.toContain('\n');
    }
  });

  it('does not read settings a command does not use', () => {
    expect(readConfig(['database'], {}, { PORT: 'abc', DATABASE_URL: 'a.sqlite' })).toEqual({ database: 'a.sqlite' });
  });

  it('parses --until as an ISO 8601 date or a zoned instant', () => {
    expect(parseUntil('2026-02-01').toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(parseUntil('2026-02-01T12:30:00+02:00').toISOString()).toBe('2026-02-01T10:30:00.000Z');
    for (const bad of ['yesterday', '1', '2026-02-01T12:30', '2026-02-30x', '2026-13-01']) {
      expect(() => parseUntil(bad), bad).toThrow(ConfigError);
    }
  });
});

describe('CLI configuration: the portal link origin', () => {
  it('takes a domain or an origin, and refuses anything else in one line', () => {
    expect(readConfig(['publicBaseDomain'], {}, {})).toEqual({ publicBaseDomain: '' });
    expect(readConfig(['publicBaseDomain'], {}, { BILLING_PUBLIC_BASE_DOMAIN: 'billing.example.com' })).toEqual({
      publicBaseDomain: 'billing.example.com',
    });
    expect(readConfig(['publicBaseDomain'], { publicBaseDomain: 'https://billing.example.com:8443' }, {})).toEqual({
      publicBaseDomain: 'https://billing.example.com:8443',
    });
    expect(() => readConfig(['publicBaseDomain'], {}, { BILLING_PUBLIC_BASE_DOMAIN: 'evil.com/path?x' })).toThrow(
      new ConfigError(
        'BILLING_PUBLIC_BASE_DOMAIN="evil.com/path?x" is not valid: expected a domain (billing.example.com) or an origin (https://billing.example.com).',
      ),
    );
  });
});

describe('CLI configuration: the address serve binds', () => {
  const expects = 'expected an IPv4 or IPv6 address (127.0.0.1, 0.0.0.0, ::) or localhost.';

  it('is loopback by default, and takes an IPv4 or IPv6 literal or localhost, a flag over the variable', () => {
    expect(DEFAULT_HOST).toBe('127.0.0.1');
    expect(readConfig(['host'], {}, {})).toEqual({ host: '127.0.0.1' });
    expect(readConfig(['host'], {}, { BILLING_HOST: '' })).toEqual({ host: '127.0.0.1' });
    expect(readConfig(['host'], {}, { BILLING_HOST: '0.0.0.0' })).toEqual({ host: '0.0.0.0' });
    expect(readConfig(['host'], {}, { BILLING_HOST: ' :: ' })).toEqual({ host: '::' });
    expect(readConfig(['host'], {}, { BILLING_HOST: '[::1]' })).toEqual({ host: '::1' });
    expect(readConfig(['host'], {}, { BILLING_HOST: 'LocalHost' })).toEqual({ host: 'localhost' });
    expect(readConfig(['host'], { host: '10.1.2.3' }, { BILLING_HOST: '0.0.0.0' })).toEqual({ host: '10.1.2.3' });
  });

  it('refuses names, ports and malformed addresses in one line', () => {
    for (const bad of ['example.com', '0.0.0.0:3000', '256.1.1.1', '::g', 'http://0.0.0.0', '*']) {
      expect(() => readConfig(['host'], {}, { BILLING_HOST: bad }), bad).toThrow(
        new ConfigError(`BILLING_HOST=${JSON.stringify(bad)} is not valid: ${expects}`),
      );
    }
    expect(() => readConfig(['host'], { host: 'all' }, {})).toThrow(
      new ConfigError(`--host "all" is not valid: ${expects}`),
    );
  });
});
