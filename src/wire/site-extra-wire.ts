/** The wire format of churn reason codes, coupon subcodes and usage, site and webhook settings. */
export {};
