import { readFileSync } from 'node:fs';

/**
 * `node dist/bench/profile-summary.js <file.cpuprofile> [count]`: the functions with the most
 * self time in a V8 CPU profile (as written by `node --cpu-prof`), and the packages and
 * project folders the time is spent in.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function summarise(file: string, count: number): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfTime = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    selfTime.set(id, (selfTime.get(id) ?? 0) + delta);
    total += delta;
  });
  const functions = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, time] of selfTime) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const where = url ? `${shortUrl(url)}:${lineNumber + 1}` : '';
    const name = `${functionName || '(anonymous)'} ${where}`.trim();
    functions.set(name, (functions.get(name) ?? 0) + time);
    areas.set(areaOf(url, functionName), (areas.get(areaOf(url, functionName)) ?? 0) + time);
  }
  const print = (title: string, entries: Map<string, number>, limit: number) => {
    console.log(`\n${title}`);
    for (const [name, time] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, limit)) {
      console.log(`  ${((100 * time) / total).toFixed(1).padStart(5)}%  ${name}`);
    }
  };
  console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled`);
  print('Self time by area', areas, 25);
  print('Self time by function', functions, count);
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) return url.slice(modules + 'node_modules/'.length);
  const dist = url.indexOf('/dist/');
  return dist !== -1 ? url.slice(dist + 1) : url.replace(/^file:\/\//, '');
}

/** The package (node_modules), project folder (dist/src/x) or V8/Node part a frame belongs to. */
function areaOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) {
    const parts = url.slice(modules + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (url.startsWith('node:')) return url;
  const dist = url.indexOf('/dist/');
  if (dist !== -1)
    return url
      .slice(dist + 1)
      .split('/')
      .slice(0, 3)
      .join('/');
  return url;
}

const [file, count] = process.argv.slice(2);
if (!file) {
  console.error('usage: node dist/bench/profile-summary.js <file.cpuprofile> [count]');
  process.exit(2);
}
summarise(file, Number(count ?? 40));
