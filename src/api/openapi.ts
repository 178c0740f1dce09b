/**
 * The OpenAPI document (`GET /openapi.json`) and its browsable reference (`/docs`), assembled from
 * the route schemas by @fastify/swagger. It is OpenAPI 3.1 because the schemas are JSON Schema
 * 2020-12 (`type: [..., "null"]`, `propertyNames`), which 3.0 cannot say. It passes Redocly's
 * recommended lint with and without the operator API (redocly.yaml, test/integration/openapi.test.ts),
 * and the SDK's types are generated from it (packages/sdk), so every operation has an
 * `operationId`, written next to its route's summary.
 */
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { apiVersion, ErrorEnvelope } from '../web/schemas.js';

/**
 * How each push to `/ingest/v1/:provider/:connectionId` proves its origin (docs/ingestion.md):
 * every provider signs the raw body its own way with the connection's secret, except Traccar,
 * which cannot sign and sends the connection token (as `Authorization: Bearer`, from
 * `forward.header`, or in the URL: the `/{token}` route). OpenAPI has no HMAC scheme, so a
 * signature is an API key in its header, described as what it is.
 */
const ingestSchemes = {
  samsaraSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Samsara-Signature',
    description: 'Samsara: `v1=<hex HMAC-SHA256 of "v1:{X-Samsara-Timestamp}:{body}">` keyed with the base64 secret.',
  },
  smartcarSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'SC-Signature',
    description: 'Smartcar: hex HMAC-SHA256 of the body keyed with the application management token.',
  },
  motiveSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'X-KT-Webhook-Signature',
    description: 'Motive: hex HMAC-SHA1 of the body keyed with the shared secret.',
  },
  genericSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Signature',
    description:
      'Generic JSON and the simulator: `sha256=<hex HMAC-SHA256>` of the body, or of `"{X-Signature-Timestamp}.{body}"` ' +
      'when that header is sent, keyed with the connection secret.',
  },
  traccarToken: {
    type: 'http',
    scheme: 'bearer',
    description:
      "Traccar server forwarding: `Authorization: Bearer <the connection's token>` (traccar.xml `forward.header`); " +
      'devices and servers that cannot set a header put the token in the URL instead (the `/{token}` operations).',
  },
} as const;

/** The security requirement of the signed push operation: any one of the provider schemes. */
export const ingestSecurity = Object.keys(ingestSchemes).map((name) => ({ [name]: [] }));

/** What each error status of the envelope means here (docs/api.md "Errors"); Fastify's default says "Default Response". */
const errorDescriptions: Record<string, string> = {
  '400': 'Invalid request (`INVALID_REQUEST`, with `details.errors`), or an operation-specific 400 code.',
  '401': 'Missing, invalid or revoked credentials (`UNAUTHORIZED`).',
  '403': 'Not allowed (`FORBIDDEN`).',
  '404': "Not found, or not the caller's (`NOT_FOUND`).",
  '409': 'Conflicts with the current state (e.g. `ODOMETER_CONFLICT`, `LIMIT_REACHED`).',
  '413': 'Body too large (`PAYLOAD_TOO_LARGE`).',
  '422': 'Valid but cannot be done (e.g. `WORK_BUDGET_EXCEEDED`).',
  '429': 'Rate limited (`RATE_LIMITED`); retry after the `Retry-After` seconds.',
  '500': 'Internal error (`INTERNAL_ERROR`); the `x-request-id` header names it in the logs.',
  '501': 'Not implemented for this provider (`REFRESH_NOT_IMPLEMENTED`).',
  '503': 'Temporarily unavailable; retry after the `Retry-After` seconds when given.',
};

type JsonObject = Record<string, unknown>;
const errorEnvelopeJson = JSON.stringify(ErrorEnvelope);

/**
 * A field with a default may be left out: request validation fills it in before checking
 * `required` (src/web/validation.ts), so the document does not ask callers for it.
 */
function optionalDefaults(schema: unknown): void {
  if (typeof schema !== 'object' || schema === null) return;
  const node = schema as JsonObject;
  const properties = node.properties as Record<string, JsonObject> | undefined;
  if (Array.isArray(node.required) && properties) {
    node.required = node.required.filter((name: string) => properties[name]?.default === undefined);
    if ((node.required as string[]).length === 0) delete node.required;
  }
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) value.forEach(optionalDefaults);
    else optionalDefaults(value);
  }
}

/**
 * The finishing touches on the assembled document, none of which a route schema can say: one
 * shared `ErrorEnvelope` schema instead of a copy per error response, error descriptions per
 * status, inputs with defaults marked optional, and distinct operation ids where one route
 * serves two methods (the device push).
 */
function finishDocument(document: JsonObject): JsonObject {
  // A JSON copy, not structuredClone: the plugin shares one operation object between the methods of a route.
  const doc = JSON.parse(JSON.stringify(document)) as JsonObject;
  const components = (doc.components ??= {}) as JsonObject;
  const schemas = (components.schemas ??= {}) as JsonObject;
  schemas.ErrorEnvelope = JSON.parse(errorEnvelopeJson) as JsonObject;
  for (const pathItem of Object.values(doc.paths as Record<string, Record<string, JsonObject>>)) {
    const operations = Object.entries(pathItem);
    const shared = operations.filter(
      ([, o]) => operations.filter(([, p]) => p.operationId === o.operationId).length > 1,
    );
    for (const [method, operation] of shared) {
      operation.operationId = `${String(operation.operationId)}${method[0]!.toUpperCase()}${method.slice(1)}`;
    }
    for (const [, operation] of operations) {
      for (const parameter of (operation.parameters ?? []) as JsonObject[]) {
        if (parameter.in !== 'path' && (parameter.schema as JsonObject | undefined)?.default !== undefined) {
          parameter.required = false;
        }
      }
      optionalDefaults(operation.requestBody);
      for (const [status, response] of Object.entries(operation.responses as Record<string, JsonObject>)) {
        const json = (response.content as Record<string, JsonObject> | undefined)?.['application/json'];
        if (!json || JSON.stringify(json.schema) !== errorEnvelopeJson) continue;
        json.schema = { $ref: '#/components/schemas/ErrorEnvelope' };
        response.description = errorDescriptions[status] ?? response.description;
      }
    }
  }
  return doc;
}

export async function registerOpenApi(app: FastifyInstance, options: { operatorApi: boolean }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Fleet telematics API',
        version: apiVersion,
        description:
          'Runs, vehicles and webhooks (/api/v1); vehicle monitoring, geofences, history reports, verification ' +
          'and usage (/v1); provider pushes (/ingest/v1)' +
          (options.operatorApi ? '; and the operator API (/admin/v1)' : '') +
          '. Envelopes and error codes: docs/api.md. A typed client: the @fleet-telematics/sdk package.',
      },
      // Relative: the server that serves this document; SDK clients take their own base URL.
      servers: [{ url: '/', description: 'The server that serves this document' }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API_KEY>' },
          ...(options.operatorApi
            ? { adminToken: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <ADMIN_TOKEN>' } }
            : {}),
          ...ingestSchemes,
        },
      },
    },
    transformObject: (documents) => finishDocument((documents as { openapiObject: JsonObject }).openapiObject) as never,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
