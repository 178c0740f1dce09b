/**
 * A company's geofences handed to the CPU pool's threads without copying them per task: one UTF-8
 * JSON text of the fence list in a SharedArrayBuffer, which a task message carries by reference.
 * A company may have 1,000 fences of 2,000 vertices; copying those to a thread (structured clone
 * of two million small arrays) would hold the event loop for a second, the very stall the pool
 * exists to avoid.
 *
 * Both sides cache by version, the list of fence ids (fences never change once created): the API
 * process reads and writes a version's text once, a few fences per statement and per turn of its
 * event loop, and each thread parses it once and keeps the list, so its geofence index
 * (src/monitoring/geofences.ts, built once per list object) serves every later dry run of that
 * version too.
 */
import { createHash } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Geofence } from '../domain/geo.js';

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

/** Versions kept by the API process (82 MB each at 2 million vertices) and by each thread. */
const mainEntries = 4;
const threadEntries = 2;
/** Fences read per statement, and copied between two turns of the event loop. */
const fencesPerSlice = 20;

/** The version of a fence list: a digest of its ids, in order. */
export function fencesVersion(ids: readonly string[]): string {
  return createHash('sha256').update(ids.join(',')).digest('base64url');
}

/**
 * Reads the fences with these ids a slice at a time and writes their list into shared memory. Each
 * slice's texts become bytes outside the JavaScript heap at once, so no fence text outlives its
 * slice there: 82 MB of strings kept through the whole copy cost the event loop garbage-collection
 * pauses of over 30 ms (geofences bench). Then the bytes are copied in, a slice at a time with a
 * turn of the event loop after each.
 */
async function share(
  version: string,
  ids: readonly string[],
  load: (ids: readonly string[]) => Promise<GeofenceText[]>,
): Promise<SharedFences> {
  const pieces: Buffer[] = [];
  for (let i = 0; i < ids.length; i += fencesPerSlice) {
    for (const f of await load(ids.slice(i, i + fencesPerSlice))) {
      const piece = `{"id":${JSON.stringify(f.id)},"name":${JSON.stringify(f.name)},"area":${f.areaJson}}`;
      pieces.push(Buffer.from(piece));
    }
  }
  // `[`, the pieces with a comma between each two, `]`.
  const length = pieces.reduce((sum, piece) => sum + piece.length, 2 + Math.max(0, pieces.length - 1));
  const text = new SharedArrayBuffer(length);
  const bytes = Buffer.from(text);
  let offset = bytes.write('[');
  for (const [i, piece] of pieces.entries()) {
    if (i > 0) offset += bytes.write(',', offset);
    offset += piece.copy(bytes, offset);
    if ((i + 1) % fencesPerSlice === 0) await yieldToLoop();
  }
  bytes.write(']', offset);
  return { version, text };
}

/** The API process's side: a version's shared text, written once (concurrent asks share the work). */
export class SharedFenceCache {
  private readonly entries = new Map<string, Promise<SharedFences>>();

  get(ids: readonly string[], load: (ids: readonly string[]) => Promise<GeofenceText[]>): Promise<SharedFences> {
    const version = fencesVersion(ids);
    let entry = this.entries.get(version);
    if (entry) {
      // Most recently used last: the first entry is the one to drop.
      this.entries.delete(version);
    } else {
      entry = share(version, ids, load);
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
