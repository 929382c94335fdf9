import { ApiError } from '../errors/api-error';
import { DataSource } from 'typeorm';
import { applyKeyset, decodeCursor, encodeCursor, toPage, toPageRequest } from './pagination';

describe('cursor pagination', () => {
  it('defaults to 20 newest first', () => {
    expect(toPageRequest({})).toEqual({ limit: 20, descending: true, after: null });
    expect(toPageRequest({ ordering: 'created_at', limit: 5 })).toEqual({ limit: 5, descending: false, after: null });
  });

  it('round-trips a cursor and binds it to its ordering', () => {
    const cursor = encodeCursor('12345', true);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, true)).toBe('12345');
    expect(() => decodeCursor(cursor, false)).toThrow(ApiError);
  });

  it.each([
    'garbage',
    '',
    encodeCursor('1; DROP TABLE x', true),
    encodeCursor('9999999999999999999', true),
    Buffer.from('{"p":1,"d":"d"}').toString('base64url'),
  ])('refuses the tampered cursor %p with 400 invalid_cursor', (cursor) => {
    try {
      decodeCursor(cursor, true);
      throw new Error('accepted');
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(400);
      expect((error as ApiError).code).toBe('invalid_cursor');
    }
  });

  it('adds the keyset condition, the order and one row more than the page', () => {
    const dataSource = new DataSource({ type: 'postgres' });
    const first = applyKeyset(dataSource.createQueryBuilder().select('t.id').from('things', 't'), 't.seq', {
      limit: 20,
      descending: true,
      after: null,
    });
    expect(first.getQuery()).toBe('SELECT t.id FROM "things" "t" ORDER BY t.seq DESC LIMIT 21');
    const next = applyKeyset(
      dataSource.createQueryBuilder().select('t.id').from('things', 't').where('t.owner = :o', { o: 1 }),
      't.seq',
      {
        limit: 5,
        descending: false,
        after: '99',
      },
    );
    expect(next.getQueryAndParameters()).toEqual([
      'SELECT t.id FROM "things" "t" WHERE t.owner = $1 AND t.seq > $2 ORDER BY t.seq ASC LIMIT 6',
      [1, '99'],
    ]);
  });

  it('cuts the extra row and points the next cursor at the last row kept', () => {
    const page = { limit: 2, descending: true, after: null };
    const rows = [{ seq: '9' }, { seq: '8' }, { seq: '7' }];
    const result = toPage(
      rows,
      page,
      (r) => r.seq,
      (r) => Number(r.seq),
    );
    expect(result.results).toEqual([9, 8]);
    expect(decodeCursor(result.next_cursor!, true)).toBe('8');
    expect(
      toPage(
        rows.slice(0, 2),
        page,
        (r) => r.seq,
        (r) => r,
      ).next_cursor,
    ).toBeNull();
  });
});
