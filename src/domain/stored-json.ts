/**
 * Whether a value equals a JSON document read back from the database, compared as the value would
 * be stored: `JSON.stringify` semantics (toJSON, undefined fields dropped, undefined array items
 * and non-finite numbers as null). Equal to `isDeepStrictEqual(JSON.parse(JSON.stringify(value)),
 * stored)` without building the copy: the health sweep compares every vehicle's state this way.
 */
export function equalsAsStored(value: unknown, stored: unknown): boolean {
  const json = asJson(value);
  if (json === null || typeof json !== 'object') return json === stored;
  if (stored === null || typeof stored !== 'object') return false;
  if (Array.isArray(json)) {
    if (!Array.isArray(stored) || stored.length !== json.length) return false;
    for (let i = 0; i < json.length; i++) {
      const item: unknown = json[i];
      if (!equalsAsStored(isOmitted(asJson(item)) ? null : item, stored[i])) return false;
    }
    return true;
  }
  if (Array.isArray(stored)) return false;
  const storedFields = stored as Record<string, unknown>;
  let fields = 0;
  for (const key of Object.keys(json)) {
    const field = (json as Record<string, unknown>)[key];
    if (isOmitted(asJson(field))) continue;
    if (!Object.hasOwn(storedFields, key) || !equalsAsStored(field, storedFields[key])) return false;
    fields++;
  }
  return fields === Object.keys(storedFields).length;
}

/** The value JSON.stringify writes in its place (before undefined is dropped or nulled). */
function asJson(value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return (value as { toJSON: () => unknown }).toJSON();
  return value;
}

function isOmitted(json: unknown): boolean {
  return json === undefined || typeof json === 'function' || typeof json === 'symbol';
}
