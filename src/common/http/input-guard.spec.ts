import { findBadString, jsonNestedDeeperThan, MAX_JSON_DEPTH } from './input-guard';

describe('jsonNestedDeeperThan', () => {
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

  it('accepts nesting up to the limit and refuses one level more', () => {
    expect(jsonNestedDeeperThan(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(jsonNestedDeeperThan(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
    expect(jsonNestedDeeperThan(`{"a":${nested(MAX_JSON_DEPTH)}}`, MAX_JSON_DEPTH)).toBe(true);
  });

  it('counts the deepest point, not the total number of brackets', () => {
    const wide = Array.from({ length: 1000 }, () => nested(10)).join(',');
    expect(jsonNestedDeeperThan(`[${wide}]`, MAX_JSON_DEPTH)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ a: '['.repeat(200), b: '\\"[[[[', c: '"{{{{' });
    expect(jsonNestedDeeperThan(text, 2)).toBe(false);
  });

  it('handles nesting far deeper than the stack allows without recursion', () => {
    expect(jsonNestedDeeperThan(nested(1_000_000), MAX_JSON_DEPTH)).toBe(true);
  });
});

describe('findBadString', () => {
  it('finds NUL characters and lone surrogates in values and keys, with their path', () => {
    expect(findBadString({ a: 'x', b: { c: 'y\u0000' } }, '')).toEqual({ path: 'b.c', problem: 'nul' });
    expect(findBadString({ email: '\ud800@x.co' }, '')).toEqual({ path: 'email', problem: 'ill_formed' });
    expect(findBadString({ items: ['ok', 'a\udc00'] }, '')).toEqual({ path: 'items.1', problem: 'ill_formed' });
    expect(findBadString({ x: 'q\udfff' }, 'query')).toEqual({ path: 'query.x', problem: 'ill_formed' });
    expect(findBadString({ ['k\ud800']: 1 }, '')).toEqual({ path: 'k\ud800', problem: 'ill_formed' });
    expect(findBadString('\u0000', 'path')).toEqual({ path: 'path', problem: 'nul' });
  });

  it('accepts well-formed text, surrogate pairs (emoji) included', () => {
    expect(findBadString({ name: 'Zoë 😀', n: 1, ok: true, none: null, list: [{ a: 'b' }] }, '')).toBeNull();
  });

  it('reports the first bad field in document order', () => {
    expect(findBadString({ a: { deep: '\u0000' }, b: '\ud800' }, '')).toEqual({ path: 'a.deep', problem: 'nul' });
  });

  it('walks values nested far deeper than the stack allows', () => {
    let value: unknown = '\ud800';
    for (let i = 0; i < 100_000; i++) value = [value];
    expect(findBadString(value, '')?.problem).toBe('ill_formed');
  });
});
