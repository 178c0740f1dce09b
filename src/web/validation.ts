/**
 * Request validation. Query strings and path parameters are text, so their validator coerces
 * ("50" → 50); bodies are JSON and are validated strictly, so `"odometer_miles": "12"` is an error,
 * not a number. Unknown properties are rejected, never silently dropped.
 */
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from '../errors.js';

// ajv-formats is CommonJS; under NodeNext its default export arrives as the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/i;

// Years 1 to 9999 in UTC: what an RFC 3339 answer can echo back (toISOString writes year 0 and
// years past 9999 in an extended form) and what Postgres stores as given.
const earliestMs = Date.parse('0001-01-01T00:00:00Z');
const latestMs = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * RFC 3339 date-time that JavaScript represents as written: `Date.parse` rolls 2024-02-30 over
 * into March, and ajv-formats accepts a leap second (23:59:60), which `new Date()` cannot hold.
 */
function isDateTime(value: string): boolean {
  const parts = rfc3339.exec(value);
  if (!parts) return false;
  const [year, month, day, hour, minute, second, , , offsetHours, offsetMinutes] = parts.slice(1).map(Number);
  // Day 0 of the next month is the last of this one; year % 400 keeps the leap-year cycle.
  const daysInMonth = new Date(Date.UTC(2000 + (year! % 400), month!, 0)).getUTCDate();
  if (!(month! >= 1 && month! <= 12 && day! >= 1 && day! <= daysInMonth)) return false;
  if (hour! > 23 || minute! > 59 || second! > 59 || offsetHours! > 23 || offsetMinutes! > 59) return false;
  const ms = Date.parse(value);
  return ms >= earliestMs && ms <= latestMs;
}

function createAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: false, allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addFormat('date-time', { type: 'string', validate: isDateTime });
  return ajv;
}

const textAjv = createAjv(true);
const bodyAjv = createAjv(false);

const unstorable = /[\0\p{Cs}]/u;

/** Why Postgres could not store `value` (text and jsonb refuse NUL and lone surrogates), or null. */
export function unstorableReason(value: string): string | null {
  const found = unstorable.exec(value);
  if (!found) return null;
  return found[0] === '\0' ? 'must not contain NUL characters' : 'must be well-formed Unicode (a lone surrogate)';
}

/**
 * Path and query values Postgres could not store (NUL, lone surrogates from percent-decoding),
 * reported as Ajv errors. They are flat: strings, or arrays of strings for a repeated key.
 */
function unstorableValues(data: unknown): ErrorObject[] {
  if (data === null || typeof data !== 'object') return [];
  const errors: ErrorObject[] = [];
  for (const [key, value] of Object.entries(data)) {
    for (const item of [value].flat()) {
      const reason = typeof item === 'string' ? unstorableReason(item) : null;
      if (reason) {
        errors.push({ instancePath: `/${key}`, schemaPath: '#', keyword: 'unstorable', params: {}, message: reason });
        break;
      }
    }
  }
  return errors;
}

type Validate = ((data: unknown) => boolean) & { errors: ErrorObject[] | null | undefined };

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  if (httpPart !== 'body') {
    const validate = textAjv.compile(schema as object);
    const validateText: Validate = (data: unknown) => {
      const unstorableErrors = unstorableValues(data);
      if (unstorableErrors.length > 0) {
        validateText.errors = unstorableErrors;
        return false;
      }
      const valid = validate(data);
      validateText.errors = validate.errors;
      return valid;
    };
    validateText.errors = null;
    return validateText as unknown as ReturnType<FastifySchemaCompiler<unknown>>;
  }
  // Bodies arrive as objects (src/api/json-body.ts refuses anything else and gives a missing one as `{}`).
  return bodyAjv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};

/** Turns Ajv errors into `{field, message}` pairs that name the parameter or body property. */
export function fieldErrors(errors: ErrorObject[], context: string | undefined): FieldError[] {
  const seen = new Set<string>();
  const result: FieldError[] = [];
  for (const error of errors) {
    // A failing nullable `anyOf` reports each branch; the branch errors say more.
    if (error.keyword === 'anyOf' || error.keyword === 'if') continue;
    const path = error.instancePath.split('/').filter(Boolean).join('.');
    let field = path;
    let message = error.message ?? 'is invalid';
    if (error.keyword === 'required') {
      field = [path, (error.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.');
      message = 'is required';
    } else if (error.keyword === 'additionalProperties') {
      field = [path, (error.params as { additionalProperty: string }).additionalProperty].filter(Boolean).join('.');
      message = 'is not allowed';
    } else if (
      error.keyword === 'type' &&
      errors.some((e) => e.keyword === 'type' && e !== error && e.instancePath === error.instancePath)
    ) {
      // The nullable branch `type: null` failed too; report the one meaningful type once.
      if (seen.has(`${field}:type`)) continue;
      seen.add(`${field}:type`);
    }
    result.push({ field: field || (context ?? 'request'), message });
  }
  return result;
}
