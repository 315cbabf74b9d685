/**
 * The Stripe payment gateway: `import { createStripeGateway } from 'billing-engine/gateways/stripe'`.
 * Needs the `stripe` package (an optional peer dependency of the engine).
 */
export {
  createStripeGateway,
  STRIPE_VAULT_NAMES,
  type StripeGateway,
  type StripeGatewayOptions,
  type StripePaymentProfile,
} from './stripe-gateway.js';
