import { describe, expect, it } from 'vitest';
import { tokenMatcher } from '../../../src/api/auth.js';

const token = 'metrics-token-0123456789abcdef';

describe('tokenMatcher', () => {
  it('accepts exactly the token', () => {
    expect(tokenMatcher(token)(token)).toBe(true);
  });

  // The comparison is of SHA-256 digests with timingSafeEqual: equal lengths whatever is presented,
  // so a guess of another length neither throws nor returns early.
  it('refuses anything else, of any length, without throwing', () => {
    const matches = tokenMatcher(token);
    for (const guess of [
      null,
      '',
      token.slice(0, -1),
      `${token}x`,
      token.toUpperCase(),
      `${token.slice(0, -1)}g`,
      'x'.repeat(10_000),
      ' ' + token,
      'métrics-token-0123456789abcdef',
    ]) {
      expect(matches(guess), String(guess)).toBe(false);
    }
  });
});
