/** Record ids. */

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs; anything else cannot name a record, so it is simply not found. */
export function isRecordId(id: string): boolean {
  return uuidPattern.test(id);
}
