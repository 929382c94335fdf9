import { OpenAPIObject } from '@nestjs/swagger';
import { createApp } from '../app.factory';
import { readEnvironment, toAppConfig } from '../config/config';
import { buildOpenApiDocument } from './openapi';

/**
 * The OpenAPI document as the code defines it, built without a database (Nest preview
 * mode). `npm run openapi` commits it as openapi.json; a test fails when the two differ.
 */
export async function generateOpenApiDocument(): Promise<OpenAPIObject> {
  const config = toAppConfig(readEnvironment({ LOG_LEVEL: 'silent' }), {
    databaseUrl: 'postgres://unused@127.0.0.1:1/unused',
    jwtSecret: 'x'.repeat(32),
  });
  const app = await createApp(config, { preview: true, runWorkers: false });
  try {
    return buildOpenApiDocument(app);
  } finally {
    await app.close();
  }
}

export function serializeOpenApi(document: OpenAPIObject): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
