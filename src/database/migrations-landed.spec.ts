import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A migration that has landed never changes: databases made by earlier builds already ran
 * it and would never see the edit. `migrations/landed.sha256` lists every migration file with
 * the SHA-256 of its content (the format of `sha256sum`); change the schema with a new
 * migration and append its line (`cd migrations && sha256sum <file> >> landed.sha256`).
 */
const dir = join(__dirname, '..', '..', 'migrations');

function landed(): Map<string, string> {
  const lines = readFileSync(join(dir, 'landed.sha256'), 'utf8').split('\n').filter(Boolean);
  return new Map(
    lines.map((line) => {
      const [hash, file] = line.split(/\s+\*?/);
      return [file, hash];
    }),
  );
}

const migrationFiles = (): string[] => readdirSync(dir).filter((f) => /^\d+-.+\.(ts|sql)$/.test(f));

describe('landed migrations', () => {
  it.each([...landed()])('%s is unchanged', (file, hash) => {
    const actual = createHash('sha256')
      .update(readFileSync(join(dir, file)))
      .digest('hex');
    expect({ file, hash: actual }).toEqual({ file, hash });
  });

  it('lists every migration file', () => {
    const listed = landed();
    expect(migrationFiles().filter((f) => !listed.has(f))).toEqual([]);
  });
});
