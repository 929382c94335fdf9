import { isCheckViolation, isDatabaseUnavailable, isDatabaseUnreachable, isUniqueViolation } from './database-errors';

describe('isDatabaseUnavailable', () => {
  it('recognises a database that refuses connections, as well as one out of reach', () => {
    for (const code of ['3D000', '28P01', '28000', '57P03', 'ECONNREFUSED', '08006']) {
      expect(isDatabaseUnavailable({ driverError: { code } })).toBe(true);
    }
    const closed = { code: '55000', message: 'database "payments" is not currently accepting connections' };
    expect(isDatabaseUnavailable(closed)).toBe(true);
  });
  it('tells start-up to wait only for a database out of reach, not for a wrong password or database name', () => {
    for (const code of ['3D000', '28P01', '28000'])
      expect(isDatabaseUnreachable({ driverError: { code } })).toBe(false);
    for (const code of ['57P03', 'ECONNREFUSED']) expect(isDatabaseUnreachable({ driverError: { code } })).toBe(true);
  });
  it('refuses failures of a statement', () => {
    expect(isDatabaseUnavailable({ driverError: { code: '55000', message: 'currval is not yet defined' } })).toBe(
      false,
    );
    expect(isDatabaseUnavailable({ driverError: { code: '23505' } })).toBe(false);
    expect(isDatabaseUnavailable(new Error('x'))).toBe(false);
  });
});

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

describe('isCheckViolation', () => {
  const check = { driverError: { code: '23514', constraint: 'ticket_types_never_oversold' } };
  it('recognises a check violation, of any constraint or of the one named', () => {
    expect(isCheckViolation(check)).toBe(true);
    expect(isCheckViolation(check, 'ticket_types_never_oversold')).toBe(true);
    expect(isCheckViolation(check, 'ticket_types_held_check')).toBe(false);
  });
  it('refuses other failures', () => {
    expect(isCheckViolation({ driverError: { code: '23505', constraint: 'ticket_types_never_oversold' } })).toBe(false);
    expect(isCheckViolation(new Error('x'))).toBe(false);
  });
});
