/** The wire format of subscription references and lookups, purge, override, payment profiles. */
export {};
