/**
 * The dispatch assistant: proposes (never assigns) a shop or technician for a new run. Pure: the caller
 * loads the roster and the current load, and records the proposal through the run state machine.
 *
 * Eligible: active, spare capacity (open runs < capacity), skills cover every item type. Among those the
 * nearest wins when both locations are known (members without a location come after located ones);
 * ties go to the lower load share, then name, then id, so the same input always gives the same answer.
 */
import { distanceM } from '../domain/geo.js';
import type { RosterMember } from '../domain/run.js';

export interface DispatchInput {
  /** The run's item types. */
  itemTypes: string[];
  location: { latitude: number; longitude: number } | null;
  roster: RosterMember[];
  /** Current load: open runs per assignee id. */
  openRunsByAssignee: Record<string, number>;
}

export interface DispatchSuggestion {
  assignee: { type: 'shop' | 'technician'; id: string; name: string };
  reason: string;
}

/** Great-circle distance between two points in degrees, km (the roster's and the API's point shape). */
export function haversineKm(
  a: { latitude: number; longitude: number },
  b: { latitude: number; longitude: number },
): number {
  return distanceM({ lat: a.latitude, lon: a.longitude }, { lat: b.latitude, lon: b.longitude }) / 1000;
}

interface Candidate {
  member: RosterMember;
  load: number;
  loadShare: number;
  distanceKm: number | null;
}

/** Same resolution as the reason: 50 m apart is the same place for dispatch, so load decides. */
function roundedKm(km: number): number {
  return Math.round(km * 10) / 10;
}

function memberLocation(member: RosterMember): { latitude: number; longitude: number } | null {
  const { latitude, longitude } = member;
  if (typeof latitude !== 'number' || typeof longitude !== 'number') return null;
  return Number.isFinite(latitude) && Number.isFinite(longitude) ? { latitude, longitude } : null;
}

function compareText(a: string, b: string): number {
  // Code-unit order, not locale order: the result must not depend on the server's locale.
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareCandidates(a: Candidate, b: Candidate): number {
  if (a.distanceKm !== null && b.distanceKm !== null) {
    const byDistance = roundedKm(a.distanceKm) - roundedKm(b.distanceKm);
    if (byDistance !== 0) return byDistance;
  } else if (a.distanceKm !== null) {
    return -1;
  } else if (b.distanceKm !== null) {
    return 1;
  }
  return (
    a.loadShare - b.loadShare || compareText(a.member.name, b.member.name) || compareText(a.member.id, b.member.id)
  );
}

function skillPhrase(itemTypes: string[]): string {
  if (itemTypes.length === 0) return '';
  return ` with ${itemTypes.join(', ')} skill${itemTypes.length === 1 ? '' : 's'}`;
}

function reasonFor(chosen: Candidate, itemTypes: string[], runLocated: boolean): string {
  const { load, member } = chosen;
  const loadText = `${load} of ${member.capacity} run${member.capacity === 1 ? '' : 's'} open`;
  const skills = skillPhrase(itemTypes);
  if (chosen.distanceKm !== null) return `nearest${skills}: ${chosen.distanceKm.toFixed(1)} km away, ${loadText}`;
  const why = runLocated ? 'no eligible member has a known location' : 'run location unknown';
  return `least loaded${skills} (${why}): ${loadText}`;
}

export function proposeDispatch(input: DispatchInput): DispatchSuggestion | null {
  const itemTypes = [...new Set(input.itemTypes)].sort(compareText);
  const candidates: Candidate[] = [];
  for (const member of input.roster) {
    const load = input.openRunsByAssignee[member.id] ?? 0;
    if (!member.active || !(load < member.capacity)) continue;
    const skills = new Set(member.skills);
    if (!itemTypes.every((type) => skills.has(type))) continue;
    const at = memberLocation(member);
    const distanceKm = input.location && at ? haversineKm(input.location, at) : null;
    candidates.push({ member, load, loadShare: load / member.capacity, distanceKm });
  }
  const [chosen] = candidates.sort(compareCandidates);
  if (!chosen) return null;
  const { type, id, name } = chosen.member;
  return { assignee: { type, id, name }, reason: reasonFor(chosen, itemTypes, input.location !== null) };
}
