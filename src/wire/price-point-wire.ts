/** The wire format of price points of products and components (requests and serializers). */
export {};
