/**
 * `createClient({ baseUrl, apiKey })`: one method per public operation of the API, named by its
 * operationId (`listVehicles`, `getVehicle`, `createWebhookSubscription`, …), each typed from the
 * OpenAPI document. Methods answer the envelope's `data`; list methods answer a page when awaited
 * and every item when iterated with `for await`. Failures throw `ApiError` subclasses.
 */
import { operations } from './operations.js';
import { Transport, type ClientOptions } from './transport.js';

export type FleetClient = ReturnType<typeof operations>;

export function createClient(options: ClientOptions): FleetClient {
  return operations(new Transport(options));
}
