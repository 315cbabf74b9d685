/**
 * SDK endpoints the server does not serve (yet), each with why, by `Controller.method` (SDK 6.1.0).
 * sdk-coverage.test.ts keeps it exact: it fails when an endpoint here becomes served (remove it)
 * and when a served endpoint stops being served (fix the regression, or list it with a reason).
 */
export const SDK_LEFT_OUT: Readonly<Record<string, string>> = {
  'APIExportsController.exportInvoices': 'Exports (issue #19 item 10): only the subscriptions export is served so far.',
  'APIExportsController.exportProformaInvoices':
    'Exports (issue #19 item 10): only the subscriptions export is served so far.',
  'APIExportsController.exportSubscriptions':
    'Exports (issue #19 item 10): asynchronous CSV export jobs are not built yet.',
  'APIExportsController.listExportedInvoices':
    'Exports (issue #19 item 10): only the subscriptions export is served so far.',
  'APIExportsController.listExportedProformaInvoices':
    'Exports (issue #19 item 10): only the subscriptions export is served so far.',
  'APIExportsController.listExportedSubscriptions':
    'Exports (issue #19 item 10): asynchronous CSV export jobs are not built yet.',
  'APIExportsController.readInvoicesExport':
    'Exports (issue #19 item 10): only the subscriptions export is served so far.',
  'APIExportsController.readProformaInvoicesExport':
    'Exports (issue #19 item 10): only the subscriptions export is served so far.',
  'APIExportsController.readSubscriptionsExport':
    'Exports (issue #19 item 10): asynchronous CSV export jobs are not built yet.',
  'AdvanceInvoiceController.issueAdvanceInvoice':
    'Advance invoices belong to the invoices work (another helper); not served by this round.',
  'AdvanceInvoiceController.readAdvanceInvoice':
    'Advance invoices belong to the invoices work (another helper); not served by this round.',
  'AdvanceInvoiceController.voidAdvanceInvoice':
    'Advance invoices belong to the invoices work (another helper); not served by this round.',
  'BillingPortalController.enableBillingPortalForCustomer':
    'Billing-portal invitations by email: the engine has portal links but no invitation mail.',
  'BillingPortalController.resendBillingPortalInvitation':
    'Billing-portal invitations by email: the engine has portal links but no invitation mail.',
  'BillingPortalController.revokeBillingPortalAccess':
    'Billing-portal invitations by email: the engine has portal links but no invitation mail.',
  'ComponentPricePointsController.archiveComponentPricePoint':
    'Component price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ComponentPricePointsController.bulkCreateComponentPricePoints':
    'Component price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ComponentPricePointsController.createComponentPricePoint':
    'Component price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ComponentPricePointsController.createCurrencyPrices':
    'Component price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ComponentPricePointsController.listAllComponentPricePoints':
    'Component price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ComponentPricePointsController.listComponentPricePoints':
    'Component price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ComponentPricePointsController.promoteComponentPricePointToDefault':
    'Component price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ComponentPricePointsController.readComponentPricePoint':
    'Component price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ComponentPricePointsController.unarchiveComponentPricePoint':
    'Component price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ComponentPricePointsController.updateComponentPricePoint':
    'Component price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ComponentPricePointsController.updateCurrencyPrices':
    'Component price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ComponentsController.createEventBasedComponent': 'Event-based components are not modelled by the engine.',
  'ComponentsController.createPrepaidUsageComponent':
    'Prepaid-usage components are not modelled by the engine (three component kinds are).',
  'CouponsController.createCouponSubcodes': 'Coupon subcodes (issue #19 item 7) are not modelled yet.',
  'CouponsController.createOrUpdateCouponCurrencyPrices':
    "Coupons have one currency, the site's; currency prices are not modelled.",
  'CouponsController.deleteCouponSubcode': 'Coupon subcodes (issue #19 item 7) are not modelled yet.',
  'CouponsController.listCouponSubcodes': 'Coupon subcodes (issue #19 item 7) are not modelled yet.',
  'CouponsController.readCouponUsage': 'Coupon usage reports (issue #19 item 7) are not built yet.',
  'CouponsController.updateCouponSubcodes': 'Coupon subcodes (issue #19 item 7) are not modelled yet.',
  'CustomFieldsController.listMetadataForResourceType':
    "Listing one resource type's metadata across records is not served yet.",
  'EventsBasedBillingSegmentsController.bulkCreateSegments':
    'Events-based billing segments: the engine has no event-based components.',
  'EventsBasedBillingSegmentsController.bulkUpdateSegments':
    'Events-based billing segments: the engine has no event-based components.',
  'EventsBasedBillingSegmentsController.createSegment':
    'Events-based billing segments: the engine has no event-based components.',
  'EventsBasedBillingSegmentsController.deleteSegment':
    'Events-based billing segments: the engine has no event-based components.',
  'EventsBasedBillingSegmentsController.listSegmentsForPricePoint':
    'Events-based billing segments: the engine has no event-based components.',
  'EventsBasedBillingSegmentsController.updateSegment':
    'Events-based billing segments: the engine has no event-based components.',
  'InsightsController.listMrrMovements':
    'Insights (stats, MRR): reporting is out of scope for the billing engine so far.',
  'InsightsController.listMrrPerSubscription':
    'Insights (stats, MRR): reporting is out of scope for the billing engine so far.',
  'InsightsController.readMrr': 'Insights (stats, MRR): reporting is out of scope for the billing engine so far.',
  'InsightsController.readSiteStats': 'Insights (stats, MRR): reporting is out of scope for the billing engine so far.',
  'InvoicesController.listConsolidatedInvoiceSegments':
    'Not among the invoice endpoints the invoices work serves so far.',
  'InvoicesController.previewCustomerInformationChanges':
    'Not among the invoice endpoints the invoices work serves so far.',
  'InvoicesController.recordPaymentForMultipleInvoices':
    'Not among the invoice endpoints the invoices work serves so far.',
  'InvoicesController.sendInvoice': 'Not among the invoice endpoints the invoices work serves so far.',
  'InvoicesController.updateCustomerInformation': 'Not among the invoice endpoints the invoices work serves so far.',
  'OffersController.archiveOffer': 'Offers are not modelled by the engine.',
  'OffersController.createOffer': 'Offers are not modelled by the engine.',
  'OffersController.listOffers': 'Offers are not modelled by the engine.',
  'OffersController.readOffer': 'Offers are not modelled by the engine.',
  'OffersController.unarchiveOffer': 'Offers are not modelled by the engine.',
  'PaymentProfilesController.changeSubscriptionDefaultPaymentProfile':
    'Payment profiles (issue #19 item 4): only updating a card is served so far.',
  'PaymentProfilesController.changeSubscriptionGroupDefaultPaymentProfile':
    'Payment profiles (issue #19 item 4): only updating a card is served so far.',
  'PaymentProfilesController.createPaymentProfile':
    'Payment profiles (issue #19 item 4): only updating a card is served so far.',
  'PaymentProfilesController.deleteSubscriptionGroupPaymentProfile':
    'Payment profiles (issue #19 item 4): only updating a card is served so far.',
  'PaymentProfilesController.deleteSubscriptionsPaymentProfile':
    'Payment profiles (issue #19 item 4): only updating a card is served so far.',
  'PaymentProfilesController.deleteUnusedPaymentProfile':
    'Payment profiles (issue #19 item 4): only updating a card is served so far.',
  'PaymentProfilesController.listPaymentProfiles':
    'Payment profiles (issue #19 item 4): only updating a card is served so far.',
  'PaymentProfilesController.readOneTimeToken':
    'Payment profiles (issue #19 item 4): only updating a card is served so far.',
  'PaymentProfilesController.readPaymentProfile':
    'Payment profiles (issue #19 item 4): only updating a card is served so far.',
  'PaymentProfilesController.sendRequestUpdatePaymentEmail':
    'Payment profiles (issue #19 item 4): only updating a card is served so far.',
  'PaymentProfilesController.verifyBankAccount':
    'Payment profiles (issue #19 item 4): only updating a card is served so far.',
  'ProductPricePointsController.archiveProductPricePoint':
    'Product price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ProductPricePointsController.bulkCreateProductPricePoints':
    'Product price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ProductPricePointsController.createProductCurrencyPrices':
    'Product price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ProductPricePointsController.createProductPricePoint':
    'Product price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ProductPricePointsController.listAllProductPricePoints':
    'Product price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ProductPricePointsController.listProductPricePoints':
    'Product price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ProductPricePointsController.promoteProductPricePointToDefault':
    'Product price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ProductPricePointsController.readProductPricePoint':
    'Product price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ProductPricePointsController.unarchiveProductPricePoint':
    'Product price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ProductPricePointsController.updateProductCurrencyPrices':
    'Product price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ProductPricePointsController.updateProductPricePoint':
    'Product price points (issue #19 item 3): the versioned catalog has no price points yet.',
  'ProformaInvoicesController.createConsolidatedProformaInvoice': 'Proforma invoices are not modelled by the engine.',
  'ProformaInvoicesController.createProformaInvoice': 'Proforma invoices are not modelled by the engine.',
  'ProformaInvoicesController.createSignupProformaInvoice':
    'Proforma invoices are not modelled by the engine (the path falls into the subscription id route).',
  'ProformaInvoicesController.listProformaInvoices': 'Proforma invoices are not modelled by the engine.',
  'ProformaInvoicesController.listSubscriptionGroupProformaInvoices':
    'Proforma invoices are not modelled by the engine.',
  'ProformaInvoicesController.previewProformaInvoice': 'Proforma invoices are not modelled by the engine.',
  'ProformaInvoicesController.previewSignupProformaInvoice': 'Proforma invoices are not modelled by the engine.',
  'ProformaInvoicesController.readProformaInvoice': 'Proforma invoices are not modelled by the engine.',
  'ProformaInvoicesController.voidProformaInvoice': 'Proforma invoices are not modelled by the engine.',
  'ReasonCodesController.createReasonCode': 'Churn reason codes are not modelled by the engine.',
  'ReasonCodesController.deleteReasonCode': 'Churn reason codes are not modelled by the engine.',
  'ReasonCodesController.listReasonCodes': 'Churn reason codes are not modelled by the engine.',
  'ReasonCodesController.readReasonCode': 'Churn reason codes are not modelled by the engine.',
  'ReasonCodesController.updateReasonCode': 'Churn reason codes are not modelled by the engine.',
  'SalesCommissionsController.listSalesCommissionSettings':
    'Sales commissions (a separate Maxio product) are out of scope.',
  'SalesCommissionsController.listSalesReps': 'Sales commissions (a separate Maxio product) are out of scope.',
  'SalesCommissionsController.readSalesRep': 'Sales commissions (a separate Maxio product) are out of scope.',
  'SitesController.listChargifyJsPublicKeys': 'Chargify.js keys: the engine has no client-side tokenizing script.',
  'SubscriptionComponentsController.activateEventBasedComponent':
    'Event-based components are not modelled by the engine.',
  'SubscriptionComponentsController.bulkRecordEvents': 'Events-based billing ingestion is not modelled by the engine.',
  'SubscriptionComponentsController.bulkResetSubscriptionComponentsPricePoints':
    'Component price points (issue #19 item 3) are not modelled yet.',
  'SubscriptionComponentsController.bulkUpdateSubscriptionComponentsPricePoints':
    'Component price points (issue #19 item 3) are not modelled yet.',
  'SubscriptionComponentsController.deactivateEventBasedComponent':
    'Event-based components are not modelled by the engine.',
  'SubscriptionComponentsController.deletePrepaidUsageAllocation':
    'Prepaid-usage components are not modelled by the engine.',
  'SubscriptionComponentsController.listSubscriptionComponentsForSite':
    'The site-wide subscription-component list is not served yet.',
  'SubscriptionComponentsController.recordEvent': 'Events-based billing ingestion is not modelled by the engine.',
  'SubscriptionComponentsController.updatePrepaidUsageAllocationExpirationDate':
    'Prepaid-usage components are not modelled by the engine.',
  'SubscriptionGroupInvoiceAccountController.createSubscriptionGroupPrepayment':
    'Subscription groups are not modelled by the engine.',
  'SubscriptionGroupInvoiceAccountController.deductSubscriptionGroupServiceCredit':
    'Subscription groups are not modelled by the engine.',
  'SubscriptionGroupInvoiceAccountController.issueSubscriptionGroupServiceCredit':
    'Subscription groups are not modelled by the engine.',
  'SubscriptionGroupInvoiceAccountController.listPrepaymentsForSubscriptionGroup':
    'Subscription groups are not modelled by the engine.',
  'SubscriptionGroupStatusController.cancelDelayedCancellationForGroup':
    'Subscription groups are not modelled by the engine.',
  'SubscriptionGroupStatusController.cancelSubscriptionsInGroup': 'Subscription groups are not modelled by the engine.',
  'SubscriptionGroupStatusController.initiateDelayedCancellationForGroup':
    'Subscription groups are not modelled by the engine.',
  'SubscriptionGroupStatusController.reactivateSubscriptionGroup':
    'Subscription groups are not modelled by the engine.',
  'SubscriptionGroupsController.addSubscriptionToGroup': 'Subscription groups are not modelled by the engine.',
  'SubscriptionGroupsController.createSubscriptionGroup': 'Subscription groups are not modelled by the engine.',
  'SubscriptionGroupsController.deleteSubscriptionGroup': 'Subscription groups are not modelled by the engine.',
  'SubscriptionGroupsController.findSubscriptionGroup': 'Subscription groups are not modelled by the engine.',
  'SubscriptionGroupsController.listSubscriptionGroups': 'Subscription groups are not modelled by the engine.',
  'SubscriptionGroupsController.readSubscriptionGroup': 'Subscription groups are not modelled by the engine.',
  'SubscriptionGroupsController.removeSubscriptionFromGroup': 'Subscription groups are not modelled by the engine.',
  'SubscriptionGroupsController.signupWithSubscriptionGroup': 'Subscription groups are not modelled by the engine.',
  'SubscriptionGroupsController.updateSubscriptionGroupMembers': 'Subscription groups are not modelled by the engine.',
  'SubscriptionInvoiceAccountController.createPrepayment':
    'Account balances, prepayments and service credits (issue #19 item 9) are not built yet.',
  'SubscriptionInvoiceAccountController.deductServiceCredit':
    'Account balances, prepayments and service credits (issue #19 item 9) are not built yet.',
  'SubscriptionInvoiceAccountController.issueServiceCredit':
    'Account balances, prepayments and service credits (issue #19 item 9) are not built yet.',
  'SubscriptionInvoiceAccountController.listPrepayments':
    'Account balances, prepayments and service credits (issue #19 item 9) are not built yet.',
  'SubscriptionInvoiceAccountController.readAccountBalances':
    'Account balances, prepayments and service credits (issue #19 item 9) are not built yet.',
  'SubscriptionInvoiceAccountController.refundPrepayment':
    'Account balances, prepayments and service credits (issue #19 item 9) are not built yet.',
  'SubscriptionStatusController.cancelDunning':
    'Stopping dunning needs a state-machine transition (past due to active) the domain does not have yet.',
  'SubscriptionStatusController.previewRenewal': 'Renewal previews (issue #19 item 5) are not served yet.',
  'SubscriptionsController.applyCouponsToSubscription':
    'Adding a coupon after signup (issue #19 item 5) is not served yet.',
  'SubscriptionsController.findSubscription':
    'Subscriptions have no reference field yet (a schema change); the path answers a clear 404.',
  'SubscriptionsController.overrideSubscription': 'Overriding dates for imports (issue #19 item 5) is not served yet.',
  'SubscriptionsController.previewSubscription':
    'Signup previews (issue #19 item 5) are not served yet; the path answers a clear 404.',
  'SubscriptionsController.purgeSubscription': 'Purging a subscription (issue #19 item 5) is not served yet.',
  'SubscriptionsController.removeCouponFromSubscription': 'Removing a coupon (issue #19 item 5) is not served yet.',
  'SubscriptionsController.updatePrepaidSubscriptionConfiguration':
    'Prepaid subscriptions (issue #19 item 9) are not modelled yet.',
  'WebhooksController.enableWebhooks':
    'Webhook settings over HTTP (issue #19 item 8) are not served yet; the CLI changes them.',
};
