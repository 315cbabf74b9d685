/** The wire format of prepayments, service credits, account balances and exports. */
export {};
