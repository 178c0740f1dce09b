/** @fleet-telematics/sdk: the typed client of the Fleet telematics API and its webhook verifiers. */
export { createClient, type FleetClient } from './client.js';
export type { ClientOptions, RequestOptions, Meta } from './transport.js';
export type { Page, PageCall } from './paging.js';
export type { Body, Data, Item, OperationId, Query } from './types.js';
export type { components, operations, paths } from './openapi.js';
export {
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  FleetError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
  type ErrorBody,
} from './errors.js';
export {
  verifyCoreWebhook,
  verifyMonitoringWebhook,
  WebhookVerificationError,
  type CoreVerifyOptions,
  type CoreWebhookEvent,
  type MonitoringWebhookEvent,
  type WebhookVerificationReason,
} from './webhooks.js';
export {
  verifyMonitoringSignature,
  verifyServiceSignature,
  type MonitoringSignatureResult,
  type ServiceSignatureResult,
  type VerifyOptions,
} from './signatures.js';

import type { Data } from './types.js';

/** The resources, as the API answers them. */
export type Run = Data<'getRun'>;
export type Vehicle = Data<'getVehicle'>;
export type WebhookSubscription = Data<'getWebhookSubscription'>;
export type MonitoringSubscription = Data<'getMonitoringSubscription'>;
export type Geofence = Data<'getGeofence'>;
export type HistoryReport = Data<'createHistoryReport'>;
export type Verification = Data<'verifyVehicle'>;
export type Usage = Data<'getUsage'>;
