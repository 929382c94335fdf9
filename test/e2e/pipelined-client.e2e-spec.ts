import { Client, Result } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import { poolOptions } from '../../src/database/pg-options';
import {
  commitWithStatement,
  deferStatement,
  PipelinedClient,
  writesAfterWork,
} from '../../src/database/pipelined-client';
import { createTestDatabase, dropTestDatabase } from '../support/database';

/**
 * The service's pipelined connections (src/database/pipelined-client.ts) keep transactions
 * whole on a real PostgreSQL: lazy BEGIN, deferred statements checked at COMMIT, and a COMMIT
 * of an aborted transaction refused. One pooled connection, so every test also proves that the
 * previous one left it clean.
 */
describe('PipelinedClient', () => {
  let url: string;
  let dataSource: DataSource;
  let sql: Client;

  beforeAll(async () => {
    url = await createTestDatabase();
    dataSource = new DataSource({
      type: 'postgres',
      url,
      extra: { ...poolOptions({ queryTimeoutSeconds: 5 }), Client: PipelinedClient, pipeline: true, max: 1 },
    });
    await dataSource.initialize();
    sql = new Client({ connectionString: url });
    await sql.connect();
    await sql.query(`CREATE TABLE pipelined (id int PRIMARY KEY, note text CHECK (note <> 'bad'))`);
  });
  afterAll(async () => {
    await sql.end();
    await dataSource.destroy();
    await dropTestDatabase(url);
  });
  beforeEach(() => sql.query('TRUNCATE pipelined'));

  const rows = async () => (await sql.query('SELECT id, note FROM pipelined ORDER BY id')).rows;

  it('commits the awaited and the deferred statements together', async () => {
    await dataSource.transaction(async (manager) => {
      await manager.query(`INSERT INTO pipelined VALUES (1, 'awaited')`);
      await deferStatement(manager, `INSERT INTO pipelined VALUES ($1, $2)`, [2, 'deferred']);
      await deferStatement(manager, `INSERT INTO pipelined VALUES ($1, $2)`, [3, 'deferred']);
    });
    expect(await rows()).toEqual([
      { id: 1, note: 'awaited' },
      { id: 2, note: 'deferred' },
      { id: 3, note: 'deferred' },
    ]);
  });

  it('runs the first statement inside the transaction (the lazy BEGIN went first)', async () => {
    await expect(
      dataSource.transaction(async (manager) => {
        await manager.query(`INSERT INTO pipelined VALUES (1, 'first')`);
        const [{ open }] = await manager.query(`SELECT now() = statement_timestamp() AS open`);
        expect(open).toBe(false); // now() is the transaction's start, before this statement
        throw new Error('rolled back on purpose');
      }),
    ).rejects.toThrow('rolled back on purpose');
    expect(await rows()).toEqual([]);
  });

  it('a failed deferred statement fails the commit with its own error, and nothing is written', async () => {
    const failure = dataSource.transaction(async (manager) => {
      await manager.query(`INSERT INTO pipelined VALUES (1, 'before')`);
      await deferStatement(manager, `INSERT INTO pipelined VALUES ($1, $2)`, [2, 'bad']);
      await deferStatement(manager, `INSERT INTO pipelined VALUES ($1, $2)`, [3, 'after']);
    });
    await expect(failure).rejects.toMatchObject({ code: '23514', constraint: 'pipelined_note_check' });
    expect(await rows()).toEqual([]);
  });

  it('a statement awaited behind a failed deferred one throws the deferred error, not "transaction aborted"', async () => {
    const failure = dataSource.transaction(async (manager) => {
      await deferStatement(manager, `INSERT INTO pipelined VALUES ($1, $2)`, [1, 'bad']);
      await manager.query(`INSERT INTO pipelined VALUES (2, 'next')`);
    });
    await expect(failure).rejects.toMatchObject({ code: '23514' });
    expect(await rows()).toEqual([]);
  });

  it('refuses to report the commit of a transaction aborted by an error the caller swallowed', async () => {
    const commit = dataSource.transaction(async (manager) => {
      await manager.query(`INSERT INTO pipelined VALUES (1, 'kept?')`);
      await manager.query(`INSERT INTO pipelined VALUES (1, 'duplicate')`).catch(() => undefined);
    });
    await expect(commit).rejects.toThrow(/aborted transaction/);
    expect(await rows()).toEqual([]);
  });

  it('an empty transaction sends nothing and leaves the connection usable', async () => {
    await dataSource.transaction(async () => undefined);
    await dataSource.transaction(async (manager) => {
      await manager.query(`INSERT INTO pipelined VALUES (1, 'after empty')`);
    });
    expect(await rows()).toEqual([{ id: 1, note: 'after empty' }]);
  });

  describe('deferred statements are held until the transaction sends something or ends', () => {
    const insert = `INSERT INTO pipelined VALUES ($1, $2)`;
    /** What `work` sends to the server, statement by statement. */
    async function sentBy(work: () => Promise<unknown>): Promise<string[]> {
      const send = jest.spyOn(PipelinedClient.prototype as unknown as { send(...args: unknown[]): unknown }, 'send');
      try {
        await work().catch(() => undefined);
        return send.mock.calls.map(([query]) => (typeof query === 'string' ? query : (query as { text: string }).text));
      } finally {
        send.mockRestore();
      }
    }

    it('a transaction of one deferred statement sends it alone, and it commits', async () => {
      expect(
        await sentBy(() => dataSource.transaction((manager) => deferStatement(manager, insert, [1, 'alone']))),
      ).toEqual([insert]);
      expect(await rows()).toEqual([{ id: 1, note: 'alone' }]);
    });

    it('a failed one alone fails the transaction with its own error, and the connection stays usable', async () => {
      await expect(
        dataSource.transaction((manager) => deferStatement(manager, insert, [1, 'bad'])),
      ).rejects.toMatchObject({ code: '23514', constraint: 'pipelined_note_check' });
      await dataSource.transaction((manager) => deferStatement(manager, insert, [2, 'next']));
      expect(await rows()).toEqual([{ id: 2, note: 'next' }]);
    });

    it('several leave behind BEGIN, in order, with the COMMIT or ahead of the next statement', async () => {
      expect(
        await sentBy(() =>
          dataSource.transaction(async (manager) => {
            await deferStatement(manager, insert, [1, 'a']);
            await deferStatement(manager, insert, [2, 'b']);
          }),
        ),
      ).toEqual(['BEGIN', insert, insert, 'COMMIT']);
      const select = `SELECT count(*)::int AS n FROM pipelined`;
      let seen: unknown;
      expect(
        await sentBy(() =>
          dataSource.transaction(async (manager) => {
            await deferStatement(manager, insert, [3, 'c']);
            seen = await manager.query(select);
          }),
        ),
      ).toEqual(['BEGIN', insert, select, 'COMMIT']);
      expect(seen).toEqual([{ n: 3 }]); // the held statement ran first, in the transaction
    });

    it('a transaction rolled back before sending anything sends nothing, its held statements included', async () => {
      expect(
        await sentBy(() =>
          dataSource.transaction(async (manager) => {
            await deferStatement(manager, insert, [1, 'dropped']);
            throw new Error('rolled back on purpose');
          }),
        ),
      ).toEqual([]);
      expect(await rows()).toEqual([]);
    });
  });

  it('parses a statement with parameters once per connection (a named prepared statement)', async () => {
    const text = `SELECT count(*)::int AS n FROM pipelined WHERE id > $1`;
    const statements = await dataSource.transaction(async (manager) => {
      await manager.query(text, [0]);
      await manager.query(text, [1]);
      return manager.query(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1`, [text]);
    });
    expect(statements).toEqual([{ n: 1 }]);
  });

  it("decodes a prepared statement's row description once per connection, and its rows every time", async () => {
    const wide = `SELECT $1::int AS n, $1::bigint AS big, now() AS at, '{"a": [1]}'::jsonb AS doc, NULL::text AS none,
                         'own' AS "__proto__", $1::text || 'x' AS n_text`;
    const narrow = `SELECT $1::text AS only`;
    const decode = jest.spyOn(Result.prototype as unknown as { addFields(fields: unknown): void }, 'addFields');
    // The empty row each result's rows are copied from (pg's own member), seen as each result parses its row.
    type Parsing = { parseRow(row: unknown[]): unknown; _prebuiltEmptyResultObject: object | null };
    const parseRow = (Result.prototype as unknown as Parsing).parseRow;
    const emptyRows: Array<object | null> = [];
    const parse = jest.spyOn(Result.prototype as unknown as Parsing, 'parseRow').mockImplementation(function (
      this: Parsing,
      row: unknown[],
    ) {
      emptyRows.push(this._prebuiltEmptyResultObject);
      return parseRow.call(this, row);
    });
    try {
      const answers = await dataSource.transaction(async (manager) => [
        await manager.query(wide, [1]),
        await manager.query(narrow, ['a']),
        await manager.query(wide, [2]),
        await manager.query(narrow, ['b']),
      ]);
      // Rows of either statement, the second time as the first: every value decoded by its type.
      for (const [index, n] of [
        [0, 1],
        [2, 2],
      ]) {
        const [row] = answers[index];
        expect(row).toEqual({
          n,
          big: String(n),
          at: expect.any(Date),
          doc: { a: [1] },
          none: null,
          ['__proto__']: 'own', // a computed key: an own property, as the column must be
          n_text: `${n}x`,
        });
        expect(Object.getPrototypeOf(row)).toBe(Object.prototype); // the column did not become the prototype
      }
      expect([answers[1], answers[3]]).toEqual([[{ only: 'a' }], [{ only: 'b' }]]);
      // pg decoded each statement's description once (this connection had not run them before),
      // and each statement's rows were copied from the same empty row both times.
      expect(decode).toHaveBeenCalledTimes(2);
      expect(emptyRows).toHaveLength(4);
      expect(emptyRows[0]).toBeTruthy();
      expect(emptyRows[2]).toBe(emptyRows[0]);
      expect(emptyRows[3]).toBe(emptyRows[1]);
      expect(emptyRows[1]).not.toBe(emptyRows[0]);
    } finally {
      decode.mockRestore();
      parse.mockRestore();
    }
  });

  it('prepares a statement afresh after its table changed shape (a migration while the process runs)', async () => {
    await sql.query(`CREATE TABLE reshaped (id int PRIMARY KEY)`);
    await sql.query(`INSERT INTO reshaped VALUES (1)`);
    const text = `SELECT * FROM reshaped WHERE id >= $1`;
    expect(await dataSource.query(text, [1])).toEqual([{ id: 1 }]);
    await sql.query(`ALTER TABLE reshaped ADD COLUMN note text DEFAULT 'new'`);
    await expect(dataSource.query(text, [1])).rejects.toMatchObject({ code: '0A000' });
    expect(await dataSource.query(text, [1])).toEqual([{ id: 1, note: 'new' }]);
  });

  it('prepares nothing with preparedStatements: false (DATABASE_PREPARED_STATEMENTS)', async () => {
    const unprepared = new DataSource({
      type: 'postgres',
      url,
      extra: { Client: PipelinedClient, pipeline: true, preparedStatements: false, max: 1 },
    });
    await unprepared.initialize();
    try {
      const statements = await unprepared.transaction(async (manager) => {
        await manager.query(`SELECT count(*) FROM pipelined WHERE id > $1`, [0]);
        return manager.query(`SELECT count(*)::int AS n FROM pg_prepared_statements`);
      });
      expect(statements).toEqual([{ n: 0 }]);
    } finally {
      await unprepared.destroy();
    }
  });

  describe('a last statement sent with its COMMIT (commitWithStatement)', () => {
    it('commits with the statement: the change, deferred statements included, is visible before the transaction ends', async () => {
      let seenInside: unknown[] = [];
      const answered = await dataSource.transaction(async (manager) => {
        await deferStatement(manager, `INSERT INTO pipelined VALUES ($1, $2)`, [1, 'deferred']);
        const inserted = await commitWithStatement<{ id: number }>(
          manager,
          `INSERT INTO pipelined VALUES ($1, $2) RETURNING id`,
          [2, 'last'],
        );
        // Another connection, while this transaction's work still runs: the COMMIT that left with
        // the statement completes on its own (the statement's answer may come a moment before it).
        const deadline = Date.now() + 5000;
        while ((seenInside = await rows()).length < 2 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        return inserted;
      });
      expect(answered).toEqual([{ id: 2 }]);
      const both = [
        { id: 1, note: 'deferred' },
        { id: 2, note: 'last' },
      ];
      expect(seenInside).toEqual(both);
      expect(await rows()).toEqual(both);
    });

    it('sends the last statement alone when it is the first too: no BEGIN, no COMMIT, and it commits', async () => {
      const send = jest.spyOn(PipelinedClient.prototype as unknown as { send(...args: unknown[]): unknown }, 'send');
      try {
        const inserted = await dataSource.transaction((manager) =>
          commitWithStatement<{ id: number }>(manager, `INSERT INTO pipelined VALUES ($1, $2) RETURNING id`, [
            1,
            'alone',
          ]),
        );
        expect(inserted).toEqual([{ id: 1 }]);
        const sent = send.mock.calls.map(([query]) =>
          typeof query === 'string' ? query : (query as { text: string }).text,
        );
        expect(sent).toEqual([`INSERT INTO pipelined VALUES ($1, $2) RETURNING id`]);
      } finally {
        send.mockRestore();
      }
      expect(await rows()).toEqual([{ id: 1, note: 'alone' }]);
    });

    it('a lone last statement that fails, at once or at its commit (a deferred constraint), writes nothing', async () => {
      await sql.query(
        `CREATE TABLE IF NOT EXISTS pipelined_deferred (id int, CONSTRAINT pipelined_deferred_once UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)`,
      );
      await expect(
        dataSource.transaction((manager) =>
          commitWithStatement(manager, `INSERT INTO pipelined VALUES ($1, $2)`, [1, 'bad']),
        ),
      ).rejects.toMatchObject({ driverError: expect.objectContaining({ code: '23514' }) });
      await expect(
        dataSource.transaction((manager) =>
          commitWithStatement(manager, `INSERT INTO pipelined_deferred VALUES ($1), ($1)`, [7]),
        ),
      ).rejects.toMatchObject({ driverError: expect.objectContaining({ code: '23505' }) });
      expect(await rows()).toEqual([]);
      expect((await sql.query('SELECT count(*)::int AS n FROM pipelined_deferred')).rows).toEqual([{ n: 0 }]);
      await dataSource.transaction((manager) => manager.query(`INSERT INTO pipelined VALUES (3, 'next')`));
      expect(await rows()).toEqual([{ id: 3, note: 'next' }]);
    });

    it('a failed last statement rolls the whole transaction back and reports its error as TypeORM would', async () => {
      const failure = dataSource.transaction(async (manager) => {
        await manager.query(`INSERT INTO pipelined VALUES (1, 'before')`);
        await commitWithStatement(manager, `INSERT INTO pipelined VALUES ($1, $2)`, [2, 'bad']);
      });
      await expect(failure).rejects.toMatchObject({
        name: 'QueryFailedError',
        driverError: expect.objectContaining({ code: '23514', constraint: 'pipelined_note_check' }),
      });
      expect(await rows()).toEqual([]);
      await dataSource.transaction((manager) => manager.query(`INSERT INTO pipelined VALUES (3, 'next')`));
      expect(await rows()).toEqual([{ id: 3, note: 'next' }]);
    });

    it('a failed deferred statement before it fails the transaction with its own error', async () => {
      const failure = dataSource.transaction(async (manager) => {
        await deferStatement(manager, `INSERT INTO pipelined VALUES ($1, $2)`, [1, 'bad']);
        await commitWithStatement(manager, `INSERT INTO pipelined VALUES ($1, $2)`, [2, 'last']).catch(() => []);
      });
      await expect(failure).rejects.toMatchObject({ code: '23514' });
      expect(await rows()).toEqual([]);
    });

    it('refuses a statement after the last one (the transaction has committed)', async () => {
      const failure = dataSource.transaction(async (manager) => {
        await commitWithStatement(manager, `INSERT INTO pipelined VALUES ($1, $2)`, [1, 'last']);
        await manager.query(`INSERT INTO pipelined VALUES (2, 'too late')`);
      });
      await expect(failure).rejects.toThrow(/after the last statement/);
      expect(await rows()).toEqual([{ id: 1, note: 'last' }]);
    });

    it('refuses a deferred statement or a second last statement after it, sending neither', async () => {
      for (const after of [
        (manager: EntityManager) => deferStatement(manager, `INSERT INTO pipelined VALUES ($1, $2)`, [2, 'deferred']),
        (manager: EntityManager) => commitWithStatement(manager, `INSERT INTO pipelined VALUES ($1, $2)`, [2, 'again']),
      ]) {
        await sql.query('TRUNCATE pipelined');
        const failure = dataSource.transaction(async (manager) => {
          await commitWithStatement(manager, `INSERT INTO pipelined VALUES ($1, $2)`, [1, 'last']);
          await after(manager);
        });
        await expect(failure).rejects.toThrow(/after the last statement/);
        expect(await rows()).toEqual([{ id: 1, note: 'last' }]);
      }
      // The connection is clean for the next transaction.
      await dataSource.transaction((manager) => manager.query(`INSERT INTO pipelined VALUES (3, 'next')`));
      expect((await rows()).map((r: { id: number }) => r.id)).toEqual([1, 3]);
    });

    it('leaves the COMMIT to the end of a transaction that writes more after its work (writesAfterWork)', async () => {
      let seenInside: unknown[] = [];
      await dataSource.transaction(async (manager) => {
        writesAfterWork(manager);
        await commitWithStatement(manager, `INSERT INTO pipelined VALUES ($1, $2)`, [1, 'last of the work']);
        seenInside = await rows();
        await manager.query(`INSERT INTO pipelined VALUES (2, 'the answer')`);
      });
      expect(seenInside).toEqual([]);
      expect(await rows()).toEqual([
        { id: 1, note: 'last of the work' },
        { id: 2, note: 'the answer' },
      ]);
    });

    it('needs a transaction', async () => {
      await expect(commitWithStatement(dataSource.manager, `SELECT 1`, [])).rejects.toThrow(
        /inside a database transaction/,
      );
    });
  });

  it('deferred statements need a transaction', async () => {
    await expect(deferStatement(dataSource.manager, `SELECT 1`, [])).rejects.toThrow(/inside a database transaction/);
  });

  it('statements outside transactions still answer (autocommit through the pool)', async () => {
    await dataSource.query(`INSERT INTO pipelined VALUES (1, 'autocommit')`);
    const [a, b] = await Promise.all([dataSource.query('SELECT 1 AS n'), dataSource.query('SELECT 2 AS n')]);
    expect([a[0].n, b[0].n]).toEqual([1, 2]);
    expect(await rows()).toEqual([{ id: 1, note: 'autocommit' }]);
  });
});
