import { describe, expect, it } from 'vitest';
import { storableText } from '../../../src/http/client.js';

describe('storableText', () => {
  it('drops NUL and replaces lone surrogates, keeping everything else', () => {
    expect(storableText('a\u0000b\u0000')).toBe('ab');
    expect(storableText('x\uD800y')).toBe('x\uFFFDy');
    expect(storableText('x\uDC00')).toBe('x\uFFFD');
    expect(storableText('\uDBFF\uD800\uDC00')).toBe('\uFFFD\uD800\uDC00');
    expect(storableText('Ölwechsel 🚗 \t\u0001\uFFFD')).toBe('Ölwechsel 🚗 \t\u0001\uFFFD');
  });

  it('stays linear on long hostile input', () => {
    const hostile = '\uD800'.repeat(200_000) + '\u0000'.repeat(200_000);
    expect(storableText(hostile)).toBe('\uFFFD'.repeat(200_000));
  });
});
