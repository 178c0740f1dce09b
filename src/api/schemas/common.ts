/**
 * Shared JSON schemas: the response envelope, meta, the error envelope and paging parameters
 * (spec/000 "Resources and their fields"). Responses are serialized from these schemas, so a
 * field that is not declared here never leaves the server.
 */
import Type, { type Static, type TSchema } from 'typebox';

export const apiVersion = '1.0.0';

/** `T | null`, written as a JSON-schema type list where possible (fast-json-stringify serializes it directly). */
export function Nullable<T extends TSchema>(schema: T) {
  const { type, enum: values } = schema as { type?: unknown; enum?: unknown[] };
  if (typeof type === 'string') {
    return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'], ...(values ? { enum: [...values, null] } : {}) });
  }
  return Type.Unsafe<Static<T> | null>({ anyOf: [schema, { type: 'null' }] });
}

/** A string restricted to `values`, typed as their union. */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 timestamp' });
export const NullableTimestamp = Nullable(Timestamp);
export const NullableString = Nullable(Type.String());

export const Meta = Type.Object(
  {
    limit: Nullable(Type.Integer({ description: 'Page size used.' })),
    offset: Nullable(Type.Integer({ description: 'Offset used.' })),
    total: Nullable(Type.Integer({ description: 'Total matching records (list endpoints).' })),
    timestamp: Nullable(Type.String({ description: 'ISO 8601 server timestamp.' })),
    version: Nullable(Type.String({ description: 'API contract version.' })),
  },
  { additionalProperties: false },
);
export type Meta = Static<typeof Meta>;

export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({ success: Type.Boolean(), data, meta: Meta });
}

export const ErrorBody = Type.Object({
  code: Type.String({ description: 'Machine-readable error code.' }),
  message: Type.String({ description: 'Human-readable message.' }),
  details: Nullable(Type.Object({}, { additionalProperties: true })),
});

export const ErrorEnvelope = Type.Object({ success: Type.Boolean(), error: ErrorBody, meta: Nullable(Meta) });
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

export function meta(page: { limit: number; offset: number; total: number | null } | null, now = new Date()): Meta {
  return {
    limit: page?.limit ?? null,
    offset: page?.offset ?? null,
    total: page?.total ?? null,
    timestamp: now.toISOString(),
    version: apiVersion,
  };
}

/** Error responses every authenticated route can give, for the OpenAPI document and serialization. */
export const authErrorResponses = { 401: ErrorEnvelope, 429: ErrorEnvelope, 500: ErrorEnvelope } as const;

export const PageQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Page size, 1 to 200.' }),
  offset: Type.Integer({ minimum: 0, default: 0, description: 'Records to skip.' }),
  updated_since: Type.String({
    format: 'date-time',
    description: 'Inclusive: records with updated_at at or after this time.',
  }),
};

/** A path id: any short string is accepted; one that names no record answers 404. */
export const PathId = Type.String({ minLength: 1, maxLength: 100 });

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs; anything else cannot name a record, so it is simply not found. */
export function isRecordId(id: string): boolean {
  return uuidPattern.test(id);
}
