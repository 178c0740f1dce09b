/**
 * Shared JSON schemas: the response envelope, meta, the error envelope, paging parameters
 * (docs/api.md) and the bounds of every input. Responses are serialized
 * from these schemas, so a field that is not declared here never leaves the server.
 */
import Type, { type Static, type TSchema } from 'typebox';

export const apiVersion = '1.0.0';

/**
 * Longest accepted input strings, in characters. Every string a request can carry (path, query,
 * body) is bounded by one of these, so no validator, regex or query ever works on more.
 */
export const maxLength = {
  /** Path ids, provider vehicle ids, roster ids: anything that names a record. */
  id: 100,
  uuid: 36,
  /** Machine names: maintenance and item types, skills, map keys. */
  code: 50,
  /** Names and titles: companies, vehicles, people, places, makes, models, address lines. */
  name: 200,
  licensePlate: 32,
  /** RFC 5321's longest forward path. */
  email: 254,
  phone: 50,
  url: 2048,
  /** RFC 3339 with nanoseconds and an offset is 35; room to spare, not to waste. */
  timestamp: 64,
  /** Free text: descriptions, notes, reasons. */
  text: 4000,
} as const;

/** Largest arrays and maps in a body (items, skills, external ids, maintenance schedules). */
export const maxItems = 100;

/** Deepest page a list can ask for; beyond it a cursor (updated_since) is the way. */
export const maxOffset = 1_000_000;

/** `T | null`, written as a JSON-schema type list where possible (fast-json-stringify serializes it directly). */
export function Nullable<T extends TSchema>(schema: T) {
  const { type, enum: values } = schema as { type?: unknown; enum?: unknown[] };
  if (typeof type === 'string') {
    return Type.Unsafe<Static<T> | null>({
      ...schema,
      type: [type, 'null'],
      ...(values ? { enum: [...values, null] } : {}),
    });
  }
  return Type.Unsafe<Static<T> | null>({ anyOf: [schema, { type: 'null' }] });
}

/** A string restricted to `values`, typed as their union. */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string } = {}) {
  return Type.Unsafe<T[number]>({
    type: 'string',
    enum: [...values],
    maxLength: Math.max(...values.map((v) => v.length)),
    ...options,
  });
}

/** An input string of one of the `maxLength` kinds. */
export function Text(kind: keyof typeof maxLength, options: { minLength?: number; description?: string } = {}) {
  return Type.String({ maxLength: maxLength[kind], ...options });
}

/** An optional input field that null clears. */
export function OptionalText(kind: keyof typeof maxLength) {
  return Type.Optional(Nullable(Text(kind)));
}

export const Uuid = Type.String({ format: 'uuid', maxLength: maxLength.uuid });
export const Timestamp = Type.String({
  format: 'date-time',
  maxLength: maxLength.timestamp,
  description: 'ISO 8601 timestamp',
});
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

export interface Page {
  limit: number;
  offset: number;
  total: number | null;
}

export function meta(page: Page | null, now = new Date()): Meta {
  return {
    limit: page?.limit ?? null,
    offset: page?.offset ?? null,
    total: page?.total ?? null,
    timestamp: now.toISOString(),
    version: apiVersion,
  };
}

/** The success envelope: `data`, and the page it is when it is one. */
export function ok<T>(data: T, page: Page | null = null) {
  return { success: true, data, meta: meta(page) };
}

/** Error responses every authenticated route can give, for the OpenAPI document and serialization. */
export const authErrorResponses = { 401: ErrorEnvelope, 429: ErrorEnvelope, 500: ErrorEnvelope } as const;

export const PageQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Page size, 1 to 200.' }),
  offset: Type.Integer({
    minimum: 0,
    maximum: maxOffset,
    default: 0,
    description: `Records to skip, 0 to ${maxOffset}.`,
  }),
  updated_since: Type.String({
    format: 'date-time',
    maxLength: maxLength.timestamp,
    description: 'Inclusive: records with updated_at at or after this time.',
  }),
};

/** `?limit=&offset=` and nothing else. */
export const PageOnlyQuery = Type.Object(
  { limit: PageQuery.limit, offset: PageQuery.offset },
  { additionalProperties: false },
);

/** A path id: any short string is accepted; one that names no record answers 404. */
export const PathId = Type.String({ minLength: 1, maxLength: maxLength.id });
