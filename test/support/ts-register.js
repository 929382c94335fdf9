// Lets a plain `node` process run this project's TypeScript sources (for tests that start
// real API processes): .ts files are compiled with swc as they are required. Packages in
// node_modules are left to Node itself, which loads ES modules through require().
const { readFileSync } = require('node:fs');
const { transformSync } = require('@swc/core');

const { join } = require('node:path');

// The build's swc settings (.swcrc), with inline source maps for stack traces.
const options = {
  ...JSON.parse(readFileSync(join(__dirname, '../../.swcrc'), 'utf8')),
  sourceMaps: 'inline',
  swcrc: false,
};

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(readFileSync(filename, 'utf8'), { ...options, filename });
  module._compile(code, filename);
};
