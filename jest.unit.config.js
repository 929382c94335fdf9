// The unit tests of the pure modules (no database, no global setup): what mutation testing runs.
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  roots: ['<rootDir>/src'],
  testMatch: [
    '<rootDir>/src/split/**/*.spec.ts',
    '<rootDir>/src/common/money/**/*.spec.ts',
    '<rootDir>/src/common/pagination/**/*.spec.ts',
    '<rootDir>/src/common/idempotency/stable-json.spec.ts',
    '<rootDir>/src/transactions/processor/card.spec.ts',
    '<rootDir>/src/sellers/document.spec.ts',
  ],
  globalSetup: undefined,
  globalTeardown: undefined,
};
