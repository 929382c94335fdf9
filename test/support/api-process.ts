import { join } from 'node:path';
import { startProcess } from '../../bench/support';
import { PROJECT_ROOT } from '../../src/config/paths';
import { TEST_JWT_SECRET } from './test-app';

/** A real API process (`src/main.ts`, compiled as it loads) against the given database; `env` adds settings. */
export async function startApiProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<{ baseUrl: string; stop(): Promise<void>; kill(): Promise<void> }> {
  const { url, stop, kill } = await startProcess(
    ['--require', join(PROJECT_ROOT, 'test/support/ts-register.js'), join(PROJECT_ROOT, 'src/main.ts')],
    {
      DATABASE_URL: databaseUrl,
      JWT_SECRET: TEST_JWT_SECRET,
      LOG_LEVEL: 'warn',
      WORKERS_IN_API: 'false',
      NODE_ENV: 'test',
      ...env,
    },
  );
  return { baseUrl: url, stop, kill };
}
