/** The one place the HTTP example reaches the wire layer: the package root exports it. */
export * from 'billing-engine';
