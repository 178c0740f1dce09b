/**
 * A vehicle's health state as `vehicle_health_state.state` keeps it: the link's fields and each
 * rule's fields that differ from their initial value, and no entry for a rule still at its
 * initial state. Most of a state is initial (a vehicle reports a few of the signals, and a rule's
 * timers and alert are null between episodes), so the stored row is under half the full state's
 * size; the sweep writes one per vehicle and reads one per vehicle every 15 minutes.
 *
 * Loading adds the left-out fields back from the initial states, so the rules see exactly the
 * state they returned: each stays a pure function of (previous state, samples, config, now).
 * A state stored in full (before this encoding) loads the same way.
 */
import type { HealthState, StoredHealthState } from '../domain/health.js';
import { equalsAsStored } from '../domain/stored-json.js';
import { healthRules } from './registry.js';
import { initialLinkState } from './rules/link-broken.js';

// Read-only: what the stored fields are compared with.
const initialLink = initialLinkState();
const initialRuleStates = new Map(healthRules.map((rule) => [rule.name, rule.initial() as unknown]));

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** An initial field value is null, a number, a boolean or an empty array or object. */
function isInitialValue(value: unknown, initial: unknown): boolean {
  if (value === initial) return true;
  if (Array.isArray(value)) return Array.isArray(initial) && value.length === 0 && initial.length === 0;
  return isPlainObject(value) && isPlainObject(initial) && isEmpty(value) && isEmpty(initial);
}

function isEmpty(value: Record<string, unknown>): boolean {
  for (const key in value) if (Object.hasOwn(value, key)) return false;
  return true;
}

/** The fields of `value` that differ from `initial`'s; a value that is not an object as it is. */
function changedFields(value: unknown, initial: unknown): unknown {
  if (!isPlainObject(value) || !isPlainObject(initial)) return value;
  const changed: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (!isInitialValue(value[key], initial[key])) changed[key] = value[key];
  }
  return changed;
}

/** The stored fields over a fresh initial state (rules may build on its arrays and objects). */
function withInitialFields(stored: unknown, initial: () => unknown): unknown {
  if (stored === undefined) return initial();
  const fresh = initial();
  return isPlainObject(stored) && isPlainObject(fresh) ? { ...fresh, ...stored } : stored;
}

const isStoredAbsent = (changed: unknown) => isPlainObject(changed) && isEmpty(changed);

/** The state as stored: initial fields and rules left out. */
export function storedHealthState(state: HealthState): StoredHealthState {
  const rules: Record<string, unknown> = {};
  for (const [name, ruleState] of Object.entries(state.rules)) {
    const changed = changedFields(ruleState, initialRuleStates.get(name));
    if (!isStoredAbsent(changed)) rules[name] = changed;
  }
  return {
    link: changedFields(state.link, initialLink) as StoredHealthState['link'],
    rules,
    alerts: state.alerts,
    status: state.status,
    linkReason: state.linkReason,
  };
}

/** The full state the rules read, from a stored one (compact or, stored before the encoding, full). */
export function loadedHealthState(stored: StoredHealthState): HealthState {
  const rules: Record<string, unknown> = {};
  for (const rule of healthRules) rules[rule.name] = withInitialFields(stored.rules?.[rule.name], rule.initial);
  return {
    link: withInitialFields(stored.link, initialLinkState) as HealthState['link'],
    rules,
    alerts: stored.alerts,
    status: stored.status,
    linkReason: stored.linkReason,
  };
}

/**
 * Whether `next` stores as `stored`, the row `previous` was loaded from, so that nothing needs
 * writing. The link and rule states a rule returned unchanged (the same object it was given, as
 * every rule does when nothing happened) are not walked: a steady sweep compares little more
 * than the alerts. A row stored in full before the compact encoding is rewritten compact at its
 * next change.
 */
export function storesAs(next: HealthState, previous: HealthState, stored: StoredHealthState): boolean {
  if (next.status !== stored.status || next.linkReason !== stored.linkReason) return false;
  if (!equalsAsStored(next.alerts, stored.alerts)) return false;
  if (next.link !== previous.link && !equalsAsStored(changedFields(next.link, initialLink), stored.link ?? {}))
    return false;
  for (const rule of healthRules) {
    const ruleState = next.rules[rule.name];
    if (ruleState === previous.rules[rule.name]) continue;
    const changed = changedFields(ruleState, initialRuleStates.get(rule.name));
    const storedRule = stored.rules?.[rule.name];
    if (storedRule === undefined ? !isStoredAbsent(changed) : !equalsAsStored(changed, storedRule)) return false;
  }
  return true;
}
