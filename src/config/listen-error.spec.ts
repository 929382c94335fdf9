import { ConfigError } from './config';
import { listenError } from './listen-error';

const failure = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('listenError', () => {
  it.each([
    ['EADDRINUSE', /PORT 3000 is already in use on 0\.0\.0\.0 \(listen EADDRINUSE\)/],
    ['ENOTFOUND', /HOST 0\.0\.0\.0 is not an address of this machine/],
    ['EADDRNOTAVAIL', /HOST 0\.0\.0\.0 is not an address of this machine/],
    ['EACCES', /PORT 3000 may not be opened by this process/],
  ])('names the setting to change for %s', (code, message) => {
    const error = listenError(failure(code, `listen ${code}`), '0.0.0.0', 3000);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(message);
  });

  it('passes other failures through as they are', () => {
    const other = failure('EMFILE', 'too many open files');
    expect(listenError(other, '0.0.0.0', 3000)).toBe(other);
  });
});
