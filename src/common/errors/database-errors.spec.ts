import { isUniqueViolation } from './database-errors';

describe('isUniqueViolation', () => {
  const unique = { driverError: { code: '23505', constraint: 'sellers_document' } };
  it('recognises a unique violation, of any constraint or of the one named', () => {
    expect(isUniqueViolation(unique)).toBe(true);
    expect(isUniqueViolation(unique, 'sellers_document')).toBe(true);
    expect(isUniqueViolation(unique, 'users_email')).toBe(false);
  });
  it('refuses other failures', () => {
    expect(isUniqueViolation({ driverError: { code: '23503' } })).toBe(false);
    expect(isUniqueViolation(new Error('x'))).toBe(false);
    expect(isUniqueViolation(null)).toBe(false);
  });
});
