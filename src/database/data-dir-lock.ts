import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';

export class DataDirInUseError extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `Another instance (pid ${pid}) is already running on the data folder ${dataDir}. ` +
        'Stop it first, or set DATABASE_URL to run several instances against one PostgreSQL server.',
    );
    this.name = 'DataDirInUseError';
  }
}

/**
 * An exclusive lock on the data folder, so that two processes never run the embedded
 * PostgreSQL on the same files. A lock left by a process that no longer exists is taken over.
 */
export function lockDataDir(dataDir: string): () => void {
  const root = resolve(dataDir);
  mkdirSync(root, { recursive: true });
  const file = join(root, 'instance.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(file, 'utf8') === String(process.pid)) unlinkSync(file);
        } catch {
          // already gone
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number.parseInt(readFileSync(file, 'utf8'), 10);
      if (Number.isInteger(holder) && holder !== process.pid && isAlive(holder)) {
        throw new DataDirInUseError(root, holder);
      }
      unlinkSync(file);
    }
  }
  throw new Error(`Could not lock the data folder ${root}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
