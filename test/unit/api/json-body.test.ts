import { describe, expect, it } from 'vitest';
import { maxJsonDepth, parseJsonBody } from '../../../src/api/json-body.js';
import { AppError } from '../../../src/errors.js';

const parse = (text: string | Buffer) => parseJsonBody(Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8'));

function refusal(text: string | Buffer): { field: string; message: string } {
  try {
    parse(text);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('INVALID_REQUEST');
    const errors = (error as AppError).details!.errors as Array<{ field: string; message: string }>;
    expect(errors).toHaveLength(1);
    return errors[0]!;
  }
  throw new Error(`expected ${String(text).slice(0, 40)} to be refused`);
}

const nested = (levels: number) => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);

describe('JSON body parser', () => {
  it('parses objects and gives an empty body as no body', () => {
    expect(parse('{"name":"Van 1","items":[{"title":"Brakes"}],"n":1.5,"ok":true,"x":null}')).toEqual({
      name: 'Van 1',
      items: [{ title: 'Brakes' }],
      n: 1.5,
      ok: true,
      x: null,
    });
    expect(parse('')).toBeUndefined();
    expect(parse('  \r\n')).toBeUndefined();
    expect(parse('\uFEFF{"a":1}')).toEqual({ a: 1 });
    expect(parse('{"emoji":"🚚 ✓"}')).toEqual({ emoji: '🚚 ✓' });
  });

  it('refuses a top level that is not an object', () => {
    for (const text of ['null', '[]', '[{"a":1}]', '"text"', '12', 'true']) {
      expect(refusal(text)).toEqual({ field: 'body', message: 'must be a JSON object' });
    }
  });

  it('refuses malformed JSON and invalid UTF-8 without echoing the body', () => {
    expect(refusal('{"a":')).toEqual({ field: 'body', message: 'is not valid JSON' });
    expect(refusal("{'a':1}")).toEqual({ field: 'body', message: 'is not valid JSON' });
    expect(refusal(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]))).toEqual({
      field: 'body',
      message: 'is not valid UTF-8',
    });
    // An overlong encoding of "/" and a truncated sequence are invalid too.
    expect(refusal(Buffer.from([0x7b, 0xc0, 0xaf, 0x7d])).message).toBe('is not valid UTF-8');
    expect(refusal(Buffer.from([0x7b, 0x22, 0xe2, 0x82]))).toEqual({ field: 'body', message: 'is not valid UTF-8' });
  });

  it(`accepts ${maxJsonDepth} levels of nesting and refuses more, however deep, without exhausting the stack`, () => {
    expect(parse(nested(maxJsonDepth))).toBeTypeOf('object');
    expect(refusal(nested(maxJsonDepth + 1)).message).toBe(`nests deeper than ${maxJsonDepth} levels`);
    const deepArray = '{"a":' + '['.repeat(200_000) + ']'.repeat(200_000) + '}';
    expect(refusal(deepArray).message).toBe(`nests deeper than ${maxJsonDepth} levels`);
  });

  it('refuses strings Postgres cannot store, naming the field', () => {
    expect(refusal('{"name":"a\\u0000b"}')).toEqual({ field: 'name', message: 'must not contain NUL characters' });
    expect(refusal('{"customer":{"address":{"street":"\\u0000"}}}')).toEqual({
      field: 'customer.address.street',
      message: 'must not contain NUL characters',
    });
    expect(refusal('{"items":[{"title":"ok"},{"title":"\\ud800"}]}')).toEqual({
      field: 'items.1.title',
      message: 'must be well-formed Unicode (a lone surrogate)',
    });
    expect(refusal('{"external_ids":{"k\\u0000":"v"}}')).toEqual({
      field: 'external_ids',
      message: 'has a key that must not contain NUL characters',
    });
    // A literal backslash-u text is just text.
    expect(parse('{"note":"\\\\u0000"}')).toEqual({ note: '\\u0000' });
  });

  it('refuses prototype poisoning', () => {
    expect(refusal('{"a":{"__proto__":{"admin":true}}}')).toEqual({ field: 'a.__proto__', message: 'is not allowed' });
    expect(refusal('{"constructor":{"prototype":{"admin":true}}}')).toEqual({
      field: 'constructor',
      message: 'is not allowed',
    });
    expect(parse('{"constructor":"a name"}')).toEqual({ constructor: 'a name' });
  });
});
