import { describe, expect, it } from 'vitest';
import { mergeRunItems } from '../../src/runs/service-requests.js';

describe('mergeRunItems', () => {
  it('adds new items and skips ones already on the run (same type, title ignoring case)', () => {
    const existing = [{ title: 'Oil change', description: null, status: 'pending', type: 'service' }];
    const merged = mergeRunItems(existing, [
      { title: ' oil change', description: 'again', status: 'pending', type: 'service' },
      { title: 'Oil change', description: null, status: 'pending', type: 'inspection' },
      { title: 'Brake inspection', description: null, status: 'pending', type: 'inspection' },
      { title: 'Brake inspection', description: null, status: 'pending', type: 'inspection' },
    ]);
    expect(merged.map((i) => `${i.type}:${i.title}`)).toEqual([
      'service:Oil change',
      'inspection:Oil change',
      'inspection:Brake inspection',
    ]);
  });
});
