/** Wire shapes of site statistics, MRR and site-wide lists. */
export {};
