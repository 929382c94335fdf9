import { readdirSync, readFileSync } from 'node:fs';
import { median } from './measure';

/**
 * CPU time per request, to say where a ratio comes from: the server process's own CPU, and
 * that of the PostgreSQL processes on this machine (none when the database runs elsewhere).
 * Read from /proc (Linux); elsewhere nothing is measured and nothing printed.
 */
export interface CpuPerRequest {
  /** Microseconds of the server process's CPU per request. */
  server: number;
  /** Microseconds of local PostgreSQL processes' CPU per request (null: none on this machine). */
  postgres: number | null;
}

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on Linux

/** CPU seconds (user + system) a process has used; null when /proc cannot tell. */
export function processCpuSeconds(pid: number): number | null {
  try {
    return cpuOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** CPU seconds used by every process named `postgres` on this machine (0 when there is none). */
export function postgresCpuSeconds(): number | null {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  let total = 0;
  for (const pid of entries) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === 'postgres') total += cpuOfStat(stat);
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}

/** utime + stime of a /proc/<pid>/stat line (fields 14 and 15, after the parenthesised name). */
function cpuOfStat(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Starts counting the CPU of `pid` and of PostgreSQL; `perRequest(n)` divides what was used since by n. */
export function cpuMeter(pid: number | undefined): { perRequest(requests: number): CpuPerRequest | null } {
  const server = pid === undefined ? null : processCpuSeconds(pid);
  const postgres = postgresCpuSeconds();
  return {
    perRequest(requests) {
      const serverNow = pid === undefined ? null : processCpuSeconds(pid);
      if (server === null || serverNow === null || requests <= 0) return null;
      const postgresNow = postgresCpuSeconds();
      const postgresUsed = postgres === null || postgresNow === null ? 0 : postgresNow - postgres;
      return {
        server: ((serverNow - server) / requests) * 1e6,
        postgres: postgresUsed > 0 ? (postgresUsed / requests) * 1e6 : null,
      };
    },
  };
}

/** The median of each part over several measurements (null when none was measured). */
export function medianCpu(samples: Array<CpuPerRequest | null>): CpuPerRequest | null {
  const measured = samples.filter((s): s is CpuPerRequest => s !== null);
  if (measured.length === 0) return null;
  const postgres = measured.map((s) => s.postgres).filter((p): p is number => p !== null);
  return { server: median(measured.map((s) => s.server)), postgres: postgres.length > 0 ? median(postgres) : null };
}

/** One line per measured side: the CPU each request cost the server process and PostgreSQL. */
export function printCpu(rows: Array<[label: string, cpu: CpuPerRequest | null]>, width = 38): void {
  if (rows.every(([, cpu]) => cpu === null)) return;
  console.log('  CPU per request (µs; median of the rounds):');
  for (const [label, cpu] of rows) {
    if (!cpu) continue;
    const postgres = cpu.postgres === null ? '' : `   PostgreSQL ${Math.round(cpu.postgres).toString().padStart(6)}`;
    console.log(`    ${label.padEnd(width - 2)}server ${Math.round(cpu.server).toString().padStart(6)}${postgres}`);
  }
}
