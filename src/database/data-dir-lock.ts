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
      if (Number.isInteger(holder) && holder !== process.pid && isProcessAlive(holder)) {
        throw new DataDirInUseError(root, holder);
      }
      unlinkSync(file);
    }
  }
  throw new Error(`Could not lock the data folder ${root}`);
}

/** Whether a process with this pid exists (a zombie, exited but not yet reaped, does not count). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    // /proc/<pid>/stat: "pid (command) state ..."; Z is a zombie. Without /proc, trust kill().
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}
