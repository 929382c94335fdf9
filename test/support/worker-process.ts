import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/config/paths';
import { TEST_JWT_SECRET } from './test-app';

export interface WorkerProcess {
  child: ChildProcess;
  /** Stops it gracefully (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
  /** Kills it at once (SIGKILL), as a crash would, and waits for it to exit. */
  kill(): Promise<void>;
}

/** A real `npm run worker` process (`src/worker.ts`, compiled as it loads) on the given database. */
export async function startWorkerProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<WorkerProcess> {
  const child = spawn(
    process.execPath,
    ['--require', join(PROJECT_ROOT, 'test/support/ts-register.js'), join(PROJECT_ROOT, 'src/worker.ts')],
    {
      cwd: PROJECT_ROOT,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        JWT_SECRET: TEST_JWT_SECRET,
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('worker did not start within 60 s')), 60_000);
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('Worker started')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code} before starting`));
    });
  });
  child.stdout!.resume();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signal = async (name: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
    await exited;
  };
  return { child, stop: () => signal('SIGTERM'), kill: () => signal('SIGKILL') };
}
