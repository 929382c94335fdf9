import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The project's root folder (the one with package.json), from the source tree or from dist/. */
export const PROJECT_ROOT = findRoot(__dirname);

/** The realistic export of the central fee service, loaded by seed:demo and used by tests. */
export const SAMPLE_RATE_PLANS_FILE = join(PROJECT_ROOT, 'data', 'rate-plans.sample.json');

function findRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`No package.json above ${start}`);
  }
}
