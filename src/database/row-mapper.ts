import type { EntityManager, EntityMetadata, ValueTransformer } from 'typeorm';

/** Column types the pg driver already returns as TypeORM would hydrate them. */
const PLAIN_TYPES = new Set(['uuid', 'text', 'integer', 'bigint', 'boolean', 'jsonb', 'timestamptz']);

/**
 * Entities from raw rows without TypeORM's query builder and hydration, for hot reads: the
 * select list and the row-to-entity function are made once per entity from its metadata (same
 * column names, same transformers), so a query costs its SQL and one compiled object literal.
 * `prefix` names the columns of a joined entity (`r__amount_cents`), so one row can carry two.
 */
export class RowMapper<T> {
  private readonly columns: Array<{ property: string; column: string; json: boolean; transformer?: ValueTransformer }>;
  private readonly byProperty: Map<string, { column: string; json: boolean; transformer?: ValueTransformer }>;
  private readonly updateDateColumn?: string;
  private readonly table: string;
  private readonly selects = new Map<string, string>();
  /** The statements of `one`, by alias and condition: the same text each time, hashed once by the driver. */
  private readonly reads = new Map<string, string>();
  /** The texts of `update` and `insert`, by template and the key of what they write. */
  private readonly statements = new WeakMap<object, Map<string, string>>();
  /** The row-to-entity function of each column prefix (see compileReader). */
  private readonly readers = new Map<string, (row: Record<string, unknown>) => T>();

  constructor(metadata: EntityMetadata) {
    this.columns = metadata.columns.map((c) => ({
      property: c.propertyName,
      column: c.databaseName,
      json: c.type === 'jsonb',
      transformer: Array.isArray(c.transformer) ? undefined : c.transformer,
    }));
    this.byProperty = new Map(this.columns.map((c) => [c.property, c]));
    this.updateDateColumn = metadata.updateDateColumn?.databaseName;
    this.table = metadata.tableName;
    const unhandled = metadata.columns.filter(
      (c) =>
        !PLAIN_TYPES.has(String(c.type)) || Array.isArray(c.transformer) || c.embeddedMetadata || c.relationMetadata,
    );
    if (unhandled.length > 0) {
      throw new Error(`RowMapper: ${metadata.name}.${unhandled[0].propertyName} is not a plain column`);
    }
  }

  /** The select list of the entity's columns from table alias `alias`, each named `<prefix><column>`. */
  select(alias: string, prefix = ''): string {
    const key = `${alias}\u0000${prefix}`;
    let list = this.selects.get(key);
    if (list === undefined) {
      list = this.columns.map(({ column }) => `${alias}."${column}" AS "${prefix}${column}"`).join(', ');
      this.selects.set(key, list);
    }
    return list;
  }

  /**
   * An UPDATE writing `changes` (entity properties; undefined ones are left alone): `template`
   * makes its text from the SET list, whose parameters are numbered after `offset`, with the
   * update-date column set to now() as TypeORM does. Answers the text and the SET list's values.
   * The text is made once per template, offset and set of columns written, and is then the same
   * string every time: the driver finds its prepared statement by its text, and hashing a text
   * built afresh (a few kilobytes with a select list) cost every request its length.
   */
  update(changes: Partial<T>, offset: number, template: (set: string) => string): { text: string; values: unknown[] } {
    const { key, values } = this.written(changes);
    const text = this.statement(template, `${offset}\u0000${key}`, () => {
      const columns = this.columnsOf(key);
      const sets = columns.map((column, i) => `"${column}" = $${offset + i + 1}`);
      if (this.updateDateColumn && !columns.includes(this.updateDateColumn))
        sets.push(`"${this.updateDateColumn}" = now()`);
      return template(sets.join(', '));
    });
    return { text, values };
  }

  /**
   * An INSERT of `data` (the database's defaults for the rest): `template` makes its text from
   * the column list and the VALUES list. Made once per template and set of columns, as `update`.
   */
  insert(
    data: Partial<T>,
    template: (columns: string, placeholders: string) => string,
  ): { text: string; values: unknown[] } {
    const { key, values } = this.written(data);
    const text = this.statement(template, key, () => {
      const columns = this.columnsOf(key);
      return template(columns.map((c) => `"${c}"`).join(', '), columns.map((_, i) => `$${i + 1}`).join(', '));
    });
    return { text, values };
  }

  /**
   * The values `data` writes, in column order, and which columns they are: a key with one
   * character per column, `1` where written.
   */
  private written(data: Partial<T>): { key: string; values: unknown[] } {
    for (const property of Object.keys(data)) {
      if (!this.byProperty.has(property)) throw new Error(`RowMapper: no column for property ${property}`);
    }
    let key = '';
    const values: unknown[] = [];
    for (const { property, json, transformer } of this.columns) {
      const value = (data as Record<string, unknown>)[property];
      if (value === undefined) {
        key += '0';
        continue;
      }
      key += '1';
      const stored = transformer ? transformer.to(value) : value;
      // pg would send a JavaScript array as a PostgreSQL array: JSON goes as text.
      values.push(json && stored !== null ? JSON.stringify(stored) : stored);
    }
    return { key, values };
  }

  private columnsOf(key: string): string[] {
    return this.columns.filter((_, i) => key[i] === '1').map((c) => c.column);
  }

  private statement(template: object, key: string, make: () => string): string {
    let texts = this.statements.get(template);
    if (!texts) this.statements.set(template, (texts = new Map()));
    let text = texts.get(key);
    if (text === undefined) texts.set(key, (text = make()));
    return text;
  }

  /** The one entity of the table (alias `alias`) matching `where` (which may end in FOR UPDATE), or null. */
  async one(manager: EntityManager, alias: string, where: string, params: unknown[]): Promise<T | null> {
    const key = `${alias}\u0000${where}`;
    let sql = this.reads.get(key);
    if (sql === undefined) {
      sql = `SELECT ${this.select(alias)} FROM ${this.table} ${alias} WHERE ${where}`;
      this.reads.set(key, sql);
    }
    const rows: Array<Record<string, unknown>> = await manager.query(sql, params);
    return rows.length > 0 ? this.map(rows[0]) : null;
  }

  /** The entity in a row selected with `select(…, prefix)`. */
  map(row: Record<string, unknown>, prefix = ''): T {
    let read = this.readers.get(prefix);
    if (read === undefined) {
      read = compileReader<T>(this.columns, prefix);
      this.readers.set(prefix, read);
    }
    return read(row);
  }
}

/**
 * The row-to-entity function of `columns` selected with `prefix`, compiled once: one object
 * literal of every property, read from its column (through its transformer). A loop that adds
 * properties one by one cost about 3 µs per row of 50 columns (6 with a prefix, whose column
 * names it built again every time), against 0.4 µs, and its entities shared no shape. The
 * generated source holds only the entity's property and column names from its metadata, as
 * JSON string literals.
 */
function compileReader<T>(
  columns: ReadonlyArray<{ property: string; column: string; transformer?: ValueTransformer }>,
  prefix: string,
): (row: Record<string, unknown>) => T {
  const transformers = columns.map((c) => c.transformer);
  const fields = columns.map(({ property, column, transformer }, i) => {
    const value = `row[${JSON.stringify(prefix + column)}]`;
    return `${JSON.stringify(property)}: ${transformer ? `transformers[${i}].from(${value})` : value}`;
  });
  const build = new Function('transformers', `return (row) => ({ ${fields.join(', ')} });`) as (
    t: typeof transformers,
  ) => (row: Record<string, unknown>) => T;
  return build(transformers);
}
