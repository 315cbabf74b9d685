/** The one place the HTTP example reaches the wire layer: `billing-engine/chargify`. */
export * from 'billing-engine/chargify';
