import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** docs/API.md is the service's reference: its tables list exactly the operations of openapi.json. */
describe('docs/API.md', () => {
  const root = join(__dirname, '../..');
  const document = JSON.parse(readFileSync(join(root, 'openapi.json'), 'utf8')) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const documented = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path}/`),
  );
  const listed = [
    ...readFileSync(join(root, 'docs/API.md'), 'utf8').matchAll(/^\|\s*([A-Z]+)\s*\|\s*`([^`]+)`\s*\|/gm),
  ].map(([, method, path]) => `${method} ${path}`);

  it('lists every operation of openapi.json', () => {
    expect(documented.filter((operation) => !listed.includes(operation))).toEqual([]);
  });

  it('lists no operation that openapi.json does not have', () => {
    expect(listed.filter((operation) => !documented.includes(operation))).toEqual([]);
  });
});
