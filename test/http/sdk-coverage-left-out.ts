/**
 * SDK endpoints the server does not serve (yet), each with why, by `Controller.method` (SDK 6.1.0).
 * sdk-coverage.test.ts keeps it exact: it fails when an endpoint here becomes served (remove it)
 * and when a served endpoint stops being served (fix the regression, or list it with a reason).
 */
export const SDK_LEFT_OUT: Readonly<Record<string, string>> = {
  'ComponentsController.createEventBasedComponent': 'Event-based components are not modelled by the engine.',
  'ComponentsController.createPrepaidUsageComponent':
    'Prepaid-usage components are not modelled by the engine (three component kinds are).',
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
  'PaymentProfilesController.changeSubscriptionGroupDefaultPaymentProfile':
    'Subscription groups are not modelled by the engine.',
  'PaymentProfilesController.deleteSubscriptionGroupPaymentProfile':
    'Subscription groups are not modelled by the engine.',
  'PaymentProfilesController.readOneTimeToken': 'One-time tokens come from Chargify.js; this server issues none.',
  'PaymentProfilesController.verifyBankAccount': 'Bank-account payment profiles are not modelled (cards only).',
  'ProformaInvoicesController.createConsolidatedProformaInvoice':
    'Subscription groups are not modelled, so there is no consolidated proforma invoice to make.',
  'ProformaInvoicesController.listSubscriptionGroupProformaInvoices':
    'Subscription groups are not modelled, so there are no group proforma invoices to list.',
  'SalesCommissionsController.listSalesCommissionSettings':
    'Sales commissions (a separate Maxio product) are out of scope.',
  'SalesCommissionsController.listSalesReps': 'Sales commissions (a separate Maxio product) are out of scope.',
  'SalesCommissionsController.readSalesRep': 'Sales commissions (a separate Maxio product) are out of scope.',
  'SitesController.listChargifyJsPublicKeys': 'Chargify.js keys: the engine has no client-side tokenizing script.',
  'SubscriptionComponentsController.activateEventBasedComponent':
    'Event-based components are not modelled by the engine.',
  'SubscriptionComponentsController.bulkRecordEvents': 'Events-based billing ingestion is not modelled by the engine.',
  'SubscriptionComponentsController.deactivateEventBasedComponent':
    'Event-based components are not modelled by the engine.',
  'SubscriptionComponentsController.deletePrepaidUsageAllocation':
    'Prepaid-usage components are not modelled by the engine.',
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
};
