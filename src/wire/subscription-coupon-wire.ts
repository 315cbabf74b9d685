/** The wire format of adding and removing a subscription's coupons. */
export {};
