import { stableStringify } from './stable-json';

describe('stableStringify', () => {
  it('ignores key order at every depth and undefined members', () => {
    expect(stableStringify({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } })).toBe(
      '{"a":{"d":[1,{"x":1,"y":2}]},"b":1}',
    );
    expect(stableStringify(undefined)).toBe('null');
  });

  it('writes null as null, alone and inside objects and arrays', () => {
    expect(stableStringify(null)).toBe('null');
    expect(stableStringify({ b: null, a: [null, 1] })).toBe('{"a":[null,1],"b":null}');
  });

  it('tells different values apart', () => {
    expect(stableStringify({ a: '1' })).not.toBe(stableStringify({ a: 1 }));
    expect(stableStringify([1, 2])).not.toBe(stableStringify([2, 1]));
  });
});
