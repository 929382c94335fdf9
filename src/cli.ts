import 'reflect-metadata';
import { Command } from 'commander';
import { writeFileSync } from 'node:fs';
import { generateOpenApiDocument, serializeOpenApi } from './openapi/generate';
import { ConfigError } from './config/config';
import { prepareRuntime } from './runtime';

/** The admin command line: `npm run cli -- <command>`. */
const program = new Command()
  .name('npm run cli --')
  .description('Administration commands of the Seller Payments Platform')
  .showHelpAfterError();

program
  .command('migrate')
  .description('apply pending database migrations (start-up also does this)')
  .action(async () => {
    const runtime = await prepareRuntime('cli', (m) => console.error(m));
    // Start-up applies what is pending; this command reports it.
    const applied = runtime.migrationsApplied;
    console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'The database schema is up to date.');
    await runtime.release();
  });

program
  .command('openapi')
  .description('print the OpenAPI document, or write it to a file')
  .option('--write <file>', 'write the document to this file')
  .action(async (options: { write?: string }) => {
    const document = serializeOpenApi(await generateOpenApiDocument());
    if (options.write) {
      writeFileSync(options.write, document);
      console.log(`Wrote ${options.write}`);
    } else {
      process.stdout.write(document);
    }
  });

program.parseAsync(process.argv).catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : `Error: ${(error as Error)?.message ?? error}`);
  process.exit(1);
});
