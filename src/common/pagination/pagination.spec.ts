import { ApiError } from '../errors/api-error';
import { DataSource } from 'typeorm';
import { applyKeyset, decodeCursor, encodeCursor, keysetSql, PageOf, toPage, toPageRequest } from './pagination';

describe('cursor pagination', () => {
  it('defaults to 20 newest first', () => {
    expect(toPageRequest({})).toEqual({ limit: 20, descending: true, after: null });
    expect(toPageRequest({ ordering: 'created_at', limit: 5 })).toEqual({ limit: 5, descending: false, after: null });
  });

  it('decodes the cursor of a page request, for either ordering', () => {
    expect(toPageRequest({ cursor: encodeCursor('42', true) })).toEqual({ limit: 20, descending: true, after: '42' });
    expect(toPageRequest({ ordering: 'created_at', cursor: encodeCursor('7', false), limit: 3 })).toEqual({
      limit: 3,
      descending: false,
      after: '7',
    });
    expect(() => toPageRequest({ cursor: 'garbage' })).toThrow(ApiError);
  });

  it('accepts the largest bigint position and refuses one past it', () => {
    expect(decodeCursor(encodeCursor('9223372036854775807', true), true)).toBe('9223372036854775807');
    expect(() => decodeCursor(encodeCursor('9223372036854775808', true), true)).toThrow(ApiError);
  });

  it('refuses a cursor of the other ordering with its own message', () => {
    for (const [issued, used] of [
      [true, false],
      [false, true],
    ]) {
      try {
        decodeCursor(encodeCursor('5', issued), used);
        throw new Error('accepted');
      } catch (error) {
        expect(error).toMatchObject({ status: 400, code: 'invalid_cursor' });
        expect((error as ApiError).message).toBe('The cursor was issued for the other ordering.');
      }
    }
  });

  it('binds a cursor to the list that issued it; one issued before lists were told apart is taken', () => {
    expect(decodeCursor(encodeCursor('5', true, 'listA'), true, 'listA')).toBe('5');
    expect(() => decodeCursor(encodeCursor('5', true, 'listA'), true, 'listB')).toThrow(
      'The cursor was issued by another list; use the next_cursor of this one.',
    );
    expect(decodeCursor(encodeCursor('5', true), true, 'listB')).toBe('5');
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
    Buffer.from('null').toString('base64url'),
    Buffer.from('{"p":"12a","d":"d"}').toString('base64url'),
    Buffer.from('{"p":"a12","d":"d"}').toString('base64url'),
    Buffer.from('{"p":"12","d":"x"}').toString('base64url'),
    Buffer.from('{"p":"12"}').toString('base64url'),
    Buffer.from('{"p":"12","d":"d","l":7}').toString('base64url'),
  ])('refuses the tampered cursor %p with 400 invalid_cursor', (cursor) => {
    try {
      decodeCursor(cursor, true);
      throw new Error('accepted');
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(400);
      expect((error as ApiError).code).toBe('invalid_cursor');
      expect((error as ApiError).message).toBe('The cursor is not valid; use the next_cursor of a previous page.');
    }
  });

  it('writes the keyset condition and clauses of hand-written SQL', () => {
    const params: unknown[] = ['seller'];
    expect(keysetSql('seq', { limit: 10, descending: true, after: null }, params)).toEqual({
      condition: null,
      orderAndLimit: 'ORDER BY seq DESC LIMIT 11',
    });
    expect(params).toEqual(['seller']);
    expect(keysetSql('seq', { limit: 10, descending: true, after: '55' }, params)).toEqual({
      condition: 'seq < $2',
      orderAndLimit: 'ORDER BY seq DESC LIMIT 11',
    });
    expect(keysetSql('l.line', { limit: 1, descending: false, after: '3' }, params)).toEqual({
      condition: 'l.line > $3',
      orderAndLimit: 'ORDER BY l.line ASC LIMIT 2',
    });
    expect(params).toEqual(['seller', '55', '3']);
  });

  it('names the page schema after its item', () => {
    class ThingResponseDto {}
    class OtherDto {}
    expect(PageOf(ThingResponseDto).name).toBe('ThingPageDto');
    expect(PageOf(OtherDto).name).toBe('OtherPageDto');
    class DtoOfThingsDto {}
    expect(PageOf(DtoOfThingsDto).name).toBe('DtoOfThingsPageDto');
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
    const older = applyKeyset(dataSource.createQueryBuilder().select('t.id').from('things', 't'), 't.seq', {
      limit: 2,
      descending: true,
      after: '50',
    });
    expect(older.getQueryAndParameters()).toEqual([
      'SELECT t.id FROM "things" "t" WHERE t.seq < $1 ORDER BY t.seq DESC LIMIT 3',
      ['50'],
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
    const ascending = toPage(
      rows,
      { ...page, descending: false },
      (r) => r.seq,
      (r) => r,
    );
    expect(decodeCursor(ascending.next_cursor!, false)).toBe('8');
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
