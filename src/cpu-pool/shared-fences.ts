/**
 * A company's geofences handed to the CPU pool's threads without copying them per task: one UTF-8
 * JSON text of the fence list in a SharedArrayBuffer, which a task message carries by reference.
 * A company may have 1,000 fences of 2,000 vertices; copying those to a thread (structured clone
 * of two million small arrays) would hold the event loop for a second, the very stall the pool
 * exists to avoid.
 *
 * Both sides cache by version, the list of fence ids (fences never change once created): the API
 * process writes a version's text once, in slices between which the event loop runs, and each
 * thread parses it once and keeps the list, so its geofence index (src/monitoring/geofences.ts,
 * built once per list object) serves every later dry run of that version too.
 */
import { createHash } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Geofence } from '../monitoring/types.js';

export interface SharedFences {
  version: string;
  /** The UTF-8 JSON of `Geofence[]`. */
  text: SharedArrayBuffer;
}

export interface GeofenceText {
  id: string;
  name: string;
  /** The area as stored, JSON. */
  areaJson: string;
}

/** Versions kept by the API process (each up to about 60 MB at the caps' worst) and by each thread. */
const mainEntries = 4;
const threadEntries = 2;
/** Fences written between two turns of the event loop. */
const fencesPerSlice = 50;

/** The version of a fence list: a digest of its ids, in order. */
export function fencesVersion(ids: readonly string[]): string {
  return createHash('sha256').update(ids.join(',')).digest('base64url');
}

/**
 * Writes the fence list into shared memory: measured, then written, a slice of fences at a time
 * with a turn of the event loop after each (the text may be tens of MB).
 */
async function share(version: string, fences: readonly GeofenceText[]): Promise<SharedFences> {
  const piece = (i: number) => {
    const f = fences[i]!;
    return `${i === 0 ? '' : ','}{"id":${JSON.stringify(f.id)},"name":${JSON.stringify(f.name)},"area":${f.areaJson}}`;
  };
  let length = 2;
  for (let i = 0; i < fences.length; i++) {
    length += Buffer.byteLength(piece(i));
    if ((i + 1) % fencesPerSlice === 0) await yieldToLoop();
  }
  const text = new SharedArrayBuffer(length);
  const bytes = Buffer.from(text);
  let offset = bytes.write('[');
  for (let i = 0; i < fences.length; i++) {
    offset += bytes.write(piece(i), offset);
    if ((i + 1) % fencesPerSlice === 0) await yieldToLoop();
  }
  bytes.write(']', offset);
  return { version, text };
}

/** The API process's side: a version's shared text, written once (concurrent asks share the work). */
export class SharedFenceCache {
  private readonly entries = new Map<string, Promise<SharedFences>>();

  get(ids: readonly string[], load: () => Promise<GeofenceText[]>): Promise<SharedFences> {
    const version = fencesVersion(ids);
    let entry = this.entries.get(version);
    if (entry) {
      // Most recently used last: the first entry is the one to drop.
      this.entries.delete(version);
    } else {
      entry = load().then((fences) => share(version, fences));
      // A failed load is not kept: the next ask tries again.
      entry.catch(() => this.entries.delete(version));
      if (this.entries.size >= mainEntries) this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(version, entry);
    return entry;
  }
}

const threadLists = new Map<string, Geofence[]>();

/** A thread's side: the fence list of a version, parsed once and kept (the same list object each time). */
export function sharedGeofences(shared: SharedFences): Geofence[] {
  let list = threadLists.get(shared.version);
  if (!list) {
    // Copied out of shared memory first: decoding reads a stable, private copy.
    list = JSON.parse(Buffer.from(Buffer.from(shared.text)).toString('utf8')) as Geofence[];
    if (threadLists.size >= threadEntries) threadLists.delete(threadLists.keys().next().value!);
    threadLists.set(shared.version, list);
  }
  return list;
}
