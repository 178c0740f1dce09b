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

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * RFC 3339 date-time that JavaScript can also represent: ajv-formats accepts a leap second
 * (23:59:60), which `new Date()` cannot hold, and that would surface as a 500 later.
 */
function isDateTime(value: string): boolean {
  return rfc3339.test(value) && Number.isFinite(Date.parse(value));
}

function createAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: false, allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addFormat('date-time', { type: 'string', validate: isDateTime });
  return ajv;
}

const textAjv = createAjv(true);
const bodyAjv = createAjv(false);

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  if (httpPart !== 'body') return textAjv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
  const validate = bodyAjv.compile(schema as object);
  // A request without a body is checked as `{}`: optional bodies pass, required fields are named.
  const validateBody = (data: unknown) => {
    const valid = validate(data ?? {});
    validateBody.errors = validate.errors;
    return valid;
  };
  validateBody.errors = null as typeof validate.errors;
  return validateBody as unknown as ReturnType<FastifySchemaCompiler<unknown>>;
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
    } else if (error.keyword === 'type' && errors.some((e) => e.keyword === 'type' && e !== error && e.instancePath === error.instancePath)) {
      // The nullable branch `type: null` failed too; report the one meaningful type once.
      if (seen.has(`${field}:type`)) continue;
      seen.add(`${field}:type`);
    }
    result.push({ field: field || (context ?? 'request'), message });
  }
  return result;
}
