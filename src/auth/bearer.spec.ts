import { bearerToken } from './bearer';

describe('bearerToken', () => {
  it('takes the token of a Bearer header, in any case, with surrounding spaces', () => {
    expect(bearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('bearer   smt_x  ')).toBe('smt_x');
  });
  it('answers nothing for another scheme, a missing token, two tokens or no header', () => {
    expect(bearerToken('Basic dXNlcjpwYXNz')).toBeUndefined();
    expect(bearerToken('Bearer ')).toBeUndefined();
    expect(bearerToken('Bearer a b')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});
