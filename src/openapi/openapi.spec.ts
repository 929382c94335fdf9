import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateOpenApiDocument, serializeOpenApi } from './generate';

describe('openapi.json', () => {
  it('is the document the code generates (run `npm run openapi` after changing the API)', async () => {
    const committed = readFileSync(join(__dirname, '../../openapi.json'), 'utf8');
    expect(serializeOpenApi(await generateOpenApiDocument())).toBe(committed);
  });
});
