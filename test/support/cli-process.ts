import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/config/paths';
import { TEST_JWT_SECRET } from './test-app';

/** `npm run cli -- <args>` on the database as a real process (sources compiled as they load); `env` adds settings. */
export function cliProcess(
  databaseUrl: string,
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; done: Promise<{ code: number | null; output: string }> } {
  const child = spawn(
    process.execPath,
    ['--require', join(PROJECT_ROOT, 'test/support/ts-register.js'), join(PROJECT_ROOT, 'src/cli.ts'), ...args],
    {
      cwd: PROJECT_ROOT,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        JWT_SECRET: TEST_JWT_SECRET,
        LOG_LEVEL: 'warn',
        NODE_ENV: 'test',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const done = new Promise<{ code: number | null; output: string }>((resolve) =>
    child.once('exit', (code) => resolve({ code, output })),
  );
  return { child, done };
}
