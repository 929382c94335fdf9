import { changedFields } from './changes';

describe('changedFields', () => {
  it('lists only the fields whose value changed, with the value before and after', () => {
    expect(changedFields({ active: true, label: 'a' }, { active: false, label: 'a' })).toEqual({
      active: { from: true, to: false },
    });
  });

  it('compares arrays and objects by content, ignoring key order', () => {
    expect(changedFields({ p: ['a', 'b'], o: { x: 1, y: 2 } }, { p: ['a', 'b'], o: { y: 2, x: 1 } })).toEqual({});
    expect(changedFields({ p: ['a'] }, { p: ['a', 'b'] })).toEqual({ p: { from: ['a'], to: ['a', 'b'] } });
  });

  it('ignores fields left out of the change and treats a missing value before as null', () => {
    expect(changedFields({ a: 1 }, { a: undefined, b: 'x' })).toEqual({ b: { from: null, to: 'x' } });
    expect(changedFields({ a: null }, { a: null })).toEqual({});
  });
});
