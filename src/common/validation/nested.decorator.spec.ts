import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validate } from 'class-validator';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Every DTO module of the service (src/<area>/dto/*.ts). */
function dtoModules(root: string): string[] {
  return readdirSync(root, { withFileTypes: true }).flatMap((entry) => {
    const path = join(root, entry.name);
    if (entry.isDirectory()) return dtoModules(path);
    return /\/dto\/[^/]+\.ts$/.test(path) && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

describe('nested DTO fields', () => {
  for (const module of dtoModules(join(__dirname, '..', '..'))) jest.requireActual(module);
  // class-validator's registry of declared rules (not part of its typed API).
  const storage = getMetadataStorage() as unknown as {
    validationMetadatas: Map<
      object,
      Array<{ type: string; target: new () => object; propertyName: string; each: boolean }>
    >;
  };
  const nested = [...storage.validationMetadatas.values()]
    .flat()
    .filter((m) => m.type === 'nestedValidation')
    .map((m) => ({ dto: m.target, field: m.propertyName, each: m.each }));

  it('are found (the DTO modules loaded)', () => {
    expect(nested.length).toBeGreaterThan(10);
  });

  // @ValidateNested alone takes an array as a list of objects: `payee: []` passed a payment
  // with no payee name, `card: []` reached the service and failed there (500).
  it.each(nested.map((n) => [`${n.dto.name}.${n.field}${n.each ? '[]' : ''}`, n] as const))(
    '%s refuses an array where an object belongs',
    async (_name, { dto, field, each }) => {
      const errors = await validate(plainToInstance(dto, { [field]: each ? [[]] : [] }));
      const own = errors.find((error) => error.property === field);
      expect(Object.values(own?.constraints ?? {})).toContain(each ? 'must hold objects only' : 'must be an object');
    },
  );
});
