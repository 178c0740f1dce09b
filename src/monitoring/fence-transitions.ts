/**
 * Geofence entry and exit from consecutive fixes (docs/monitoring.md; Traccar's GeofenceEventHandler, by
 * set difference, docs/health.md "Sources"), shared by the entry and the exit detector (each
 * keeps its own copy of this state, so either works alone).
 *
 * - The first fix ever known sends nothing: it only says where the vehicle is.
 * - Per fence, against the set of fences the vehicle was inside at the previous fix: outside →
 *   inside is an entry, inside → outside an exit, at the new fix's time; so entry and exit
 *   alternate per fence.
 * - Sparse fixes: both outside, but the straight segment between them crosses the fence: an entry
 *   then an exit, both at the new fix's time (the reading that revealed them). Only for fixes at
 *   most `maxCrossingGapMs` apart: across a longer gap the straight line says nothing about the
 *   road taken. Both inside with the segment leaving the fence sends nothing: a road hugging a
 *   concave fence is likelier than a short excursion nobody saw.
 * - A fence deleted (or no longer watched) is dropped from the set without an exit; a fence added
 *   around a parked vehicle gives an entry at its next fix.
 */
import { isDeepStrictEqual } from 'node:util';
import type { RuleSample } from '../domain/sample.js';
import { freshSamples, type Watermarks } from './fresh.js';
import { geofenceIndexFor } from './geofences.js';
import type { Geofence } from '../domain/geo.js';
import type { MonitoringInput } from './types.js';

/** Fixes further apart than this are not joined by a straight line for crossings [U]. */
export const maxCrossingGapMs = 30 * 60_000;
/** Bounds the state: a vehicle is inside a handful of fences, never hundreds. */
const maxInsideFences = 256;

export interface FenceState {
  /** `location` watermark. */
  watermarks: Watermarks;
  /** The previous fix; null until the first. */
  last: { lat: number; lon: number; atMs: number } | null;
  /** Ids of the fences the vehicle was inside at the previous fix. */
  inside: string[];
}

export interface FenceTransition {
  fence: Geofence;
  edge: 'entry' | 'exit';
  atMs: number;
  /** True when found on the segment between two fixes, both outside the fence. */
  crossing: boolean;
}

export function initialFenceState(): FenceState {
  return { watermarks: {}, last: null, inside: [] };
}

function fixOf(sample: RuleSample): { lat: number; lon: number } | null {
  const value = sample.value;
  if (typeof value !== 'object' || value === null) return null;
  const { lat, lon } = value as Record<string, unknown>;
  if (typeof lat !== 'number' || typeof lon !== 'number') return null;
  if (!(lat >= -90 && lat <= 90 && lon >= -180 && lon <= 180)) return null;
  return { lat, lon };
}

const positionCache = new WeakMap<readonly Geofence[], Map<string, { fence: Geofence; order: number }>>();

/** Each fence by id with its place in the list (transitions follow the list's order); built once per list. */
function positionsOf(fences: readonly Geofence[]): Map<string, { fence: Geofence; order: number }> {
  let positions = positionCache.get(fences);
  if (!positions) {
    positions = new Map(fences.map((fence, order) => [fence.id, { fence, order }]));
    positionCache.set(fences, positions);
  }
  return positions;
}

type FenceAnswer = { state: FenceState; transitions: FenceTransition[] };

/**
 * The last answer per input object: the entry and the exit detector ask with the same input and
 * `now`, and almost always an equal state (each keeps its own copy), so the fences are tested once.
 */
const lastAnswers = new WeakMap<MonitoringInput, { prev: FenceState; nowMs: number; answer: FenceAnswer }>();

export function fenceTransitions(prev: FenceState, input: MonitoringInput, now: Date): FenceAnswer {
  const cached = lastAnswers.get(input);
  if (cached && cached.nowMs === now.getTime() && (cached.prev === prev || isDeepStrictEqual(cached.prev, prev))) {
    return cached.answer;
  }
  const answer = computeTransitions(prev, input, now);
  lastAnswers.set(input, { prev, nowMs: now.getTime(), answer });
  return answer;
}

function computeTransitions(prev: FenceState, input: MonitoringInput, now: Date): FenceAnswer {
  const fresh = freshSamples(input.samples, ['location'], prev.watermarks, now);
  if (fresh.samples.length === 0) return { state: prev, transitions: [] };
  const index = geofenceIndexFor(input.geofences);
  const positions = positionsOf(input.geofences);
  let last = prev.last;
  let inside = new Set(prev.inside);
  const transitions: FenceTransition[] = [];
  for (const sample of fresh.samples) {
    const fix = fixOf(sample);
    if (!fix) continue;
    const atMs = sample.recordedAt.getTime();
    const containing = new Set(index.containing(fix).map((fence) => fence.id));
    if (last) {
      const crossed =
        atMs - last.atMs <= maxCrossingGapMs
          ? new Set(index.crossedBy(last, fix).map((fence) => fence.id))
          : new Set<string>();
      const touched = [...new Set([...inside, ...containing, ...crossed])]
        .map((id) => positions.get(id))
        .filter((entry) => entry !== undefined)
        .sort((a, b) => a.order - b.order);
      for (const { fence } of touched) {
        const was = inside.has(fence.id);
        const is = containing.has(fence.id);
        if (!was && is) transitions.push({ fence, edge: 'entry', atMs, crossing: false });
        else if (was && !is) transitions.push({ fence, edge: 'exit', atMs, crossing: false });
        else if (!was && !is && crossed.has(fence.id)) {
          transitions.push({ fence, edge: 'entry', atMs, crossing: true });
          transitions.push({ fence, edge: 'exit', atMs, crossing: true });
        }
      }
    }
    inside = containing;
    last = { ...fix, atMs };
  }
  return {
    state: { watermarks: fresh.watermarks, last, inside: [...inside].sort().slice(0, maxInsideFences) },
    transitions,
  };
}
