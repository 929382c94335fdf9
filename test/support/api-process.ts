import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { startProcess } from '../../bench/support';
import { findFreePort } from '../../src/common/net/free-port';
import { PROJECT_ROOT } from '../../src/config/paths';
import { TEST_JWT_SECRET } from './test-app';

const TS_MAIN = ['--require', join(PROJECT_ROOT, 'test/support/ts-register.js'), join(PROJECT_ROOT, 'src/main.ts')];

/** A real API process (`src/main.ts`, compiled as it loads) against the given database; `env` adds settings. */
export async function startApiProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<{ baseUrl: string; stop(): Promise<void>; kill(): Promise<void> }> {
  const { url, stop, kill } = await startProcess(TS_MAIN, {
    DATABASE_URL: databaseUrl,
    JWT_SECRET: TEST_JWT_SECRET,
    LOG_LEVEL: 'warn',
    WORKERS_IN_API: 'false',
    NODE_ENV: 'test',
    ...env,
  });
  return { baseUrl: url, stop, kill };
}

export interface ApiProcess {
  child: ChildProcess;
  baseUrl: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Settles when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once /health/ready answers 200; rejects when the process exits first. */
  ready(timeoutMs?: number): Promise<void>;
}

/**
 * Spawns the API as an operator would, with its output kept for the test: by default
 * `node src/main.ts` (compiled as it loads), or another command (`npm start`). The
 * environment is the test runner's plus `env`, on a free loopback port.
 */
/** `env`: added to this process's environment; a variable given as undefined is removed from it. */
export async function spawnApi(env: Record<string, string | undefined>, command?: string[]): Promise<ApiProcess> {
  const port = await findFreePort();
  const [file, ...args] = command ?? [process.execPath, ...TS_MAIN];
  const environment: NodeJS.ProcessEnv = {
    ...process.env,
    JWT_SECRET: TEST_JWT_SECRET,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    ...env,
    PORT: String(port),
    HOST: '127.0.0.1',
  };
  for (const [name, value] of Object.entries(environment)) if (value === undefined) delete environment[name];
  const child = spawn(file, args, {
    cwd: PROJECT_ROOT,
    env: environment,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += String(chunk)));
  child.stderr!.on('data', (chunk) => (output += String(chunk)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    child,
    baseUrl,
    output: () => output,
    exited,
    async ready(timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`the API exited (${child.exitCode ?? child.signalCode}):\n${output}`);
        }
        try {
          if ((await fetch(`${baseUrl}/health/ready`)).ok) return;
        } catch {
          // not listening yet
        }
        if (Date.now() > deadline) throw new Error(`the API was not ready in ${timeoutMs} ms:\n${output}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
  };
}
