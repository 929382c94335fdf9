import { readdirSync, readFileSync } from 'node:fs';
import { median } from './measure';

/**
 * CPU time per request, to say where a ratio comes from: the server process's own CPU, and
 * that of the PostgreSQL processes on this machine (none when the database runs elsewhere).
 * Read from /proc (Linux); elsewhere nothing is measured and nothing printed.
 */
export interface CpuPerRequest {
  /** Microseconds of the server process's CPU per request (null: no server process, as for pgbench). */
  server: number | null;
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

/**
 * The CPU of a /proc/<pid>/stat line: its own (utime + stime, fields 14 and 15) and that of
 * its children that ended (cutime + cstime, 16 and 17): PostgreSQL's postmaster collects the
 * CPU of backends whose connections closed (pgbench's, at the end of each run).
 */
function cpuOfStat(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0) / TICKS_PER_SECOND;
}

/**
 * Starts counting the CPU of the processes `pids` (together) and of PostgreSQL; `perRequest(n)`
 * divides what was used since by n (null when nothing could be measured).
 */
export function cpuMeter(pids: Array<number | undefined>): { perRequest(requests: number): CpuPerRequest | null } {
  const serversCpu = () => {
    const used = pids.map((pid) => (pid === undefined ? null : processCpuSeconds(pid)));
    return used.length === 0 || used.includes(null) ? null : (used as number[]).reduce((a, b) => a + b, 0);
  };
  const server = serversCpu();
  const postgres = postgresCpuSeconds();
  return {
    perRequest(requests) {
      if (requests <= 0) return null;
      const serverNow = serversCpu();
      const postgresNow = postgresCpuSeconds();
      const postgresUsed = postgres === null || postgresNow === null ? 0 : postgresNow - postgres;
      const measured = {
        server: server === null || serverNow === null ? null : ((serverNow - server) / requests) * 1e6,
        postgres: postgresUsed > 0 ? (postgresUsed / requests) * 1e6 : null,
      };
      return measured.server === null && measured.postgres === null ? null : measured;
    },
  };
}

/** The median of each part over several measurements (null when none was measured). */
export function medianCpu(samples: Array<CpuPerRequest | null>): CpuPerRequest | null {
  const measured = samples.filter((s): s is CpuPerRequest => s !== null);
  if (measured.length === 0) return null;
  const part = (values: Array<number | null>) => {
    const known = values.filter((v): v is number => v !== null);
    return known.length > 0 ? median(known) : null;
  };
  return { server: part(measured.map((s) => s.server)), postgres: part(measured.map((s) => s.postgres)) };
}

/** One line per measured side: the CPU each request cost the server process and PostgreSQL. */
export function printCpu(rows: Array<[label: string, cpu: CpuPerRequest | null]>, width = 38): void {
  if (rows.every(([, cpu]) => cpu === null)) return;
  console.log('  CPU per request (µs; median of the rounds):');
  for (const [label, cpu] of rows) {
    if (!cpu) continue;
    const part = (name: string, value: number | null) =>
      `${name} ${value === null ? '-'.padStart(6) : Math.round(value).toString().padStart(6)}`;
    console.log(`    ${label.padEnd(width - 2)}${part('server', cpu.server)}   ${part('PostgreSQL', cpu.postgres)}`);
  }
}
