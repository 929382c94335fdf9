import { registrationProblems } from './user.dto';

describe('registrationProblems (the API rules for callers that are not requests)', () => {
  const valid = { email: 'ana@example.com', password: 'long enough', name: 'Ana' };

  it('finds nothing wrong with what the API takes', () => {
    expect(registrationProblems(valid)).toEqual([]);
  });

  it.each([
    [{ ...valid, email: 'not-an-email' }, 'email must be an e-mail address'],
    // Missing or of another kind: no length message about a value that is not there.
    [{ ...valid, email: undefined as unknown as string }, 'email must be an e-mail address'],
    [{ ...valid, email: 123 as unknown as string }, 'email must be an e-mail address'],
    [{ ...valid, password: 'short' }, 'password must be 8 to 128 characters'],
    [{ ...valid, name: '' }, 'name should not be empty or blank'],
    [{ ...valid, name: '   ' }, 'name should not be empty or blank'],
    // Only invisible characters: a zero-width space, a word joiner and a byte-order mark.
    [{ ...valid, name: '\u200b\u2060\ufeff' }, 'name should not be empty or blank'],
    [{ ...valid, name: 'x'.repeat(201) }, 'name must be shorter than or equal to 200 characters'],
  ])('refuses %j: %s', (fields, problem) => {
    expect(registrationProblems(fields)).toEqual([problem]);
  });
});
