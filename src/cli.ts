import 'reflect-metadata';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Command } from 'commander';
import { AppModule } from './app.module';
import { registrationProblems } from './auth/dto/user.dto';
import { UsersService } from './auth/users.service';
import { demoCurlLines, seedDemo } from './demo/seed-demo';
import { CheckoutService } from './events/checkout.service';
import { PinoNestLogger, createLogger } from './common/logging/logger';
import { parseDateTime } from './common/validation/date-time.decorator';
import { HttpMetrics } from './metrics/http-metrics';
import { RatePlansSyncService, SyncFileError } from './plans/rate-plans-sync.service';
import { SingleBar, Presets } from 'cli-progress';
import { readFileSync, writeFileSync } from 'node:fs';
import { generateOpenApiDocument, serializeOpenApi } from './openapi/generate';
import { APP_CONFIG, AppConfig, ConfigError, localBaseUrl } from './config/config';
import { prepareRuntime } from './runtime';
import { SubscriptionRenewals } from './subscriptions/subscription-renewals.service';

/** The `--now` option of the jobs run once (see runAsOf). */
const AS_OF = 'the time to run as of (ISO 8601), default the current time';

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
  .command('create-superuser')
  .description('create a superuser, or promote the user with this e-mail (set the password, reactivate the account)')
  .requiredOption('--email <email>', 'e-mail of the superuser')
  .requiredOption('--password <password>', 'password, 8 to 128 characters')
  .option('--name <name>', 'display name')
  .action(async (options: { email: string; password: string; name?: string }) => {
    // The API's rules for a user; a promotion that gives no --name keeps the user's name.
    const problems = registrationProblems({ ...options, name: options.name ?? 'kept' });
    if (problems.length > 0) throw new Error(problems.map((problem) => `--${problem}`).join('; '));
    await withApplication(async (app) => {
      const { user, created, reactivated } = await app
        .get(UsersService)
        .createOrPromoteSuperuser(options.email, options.password, options.name);
      const what = created ? 'Created' : reactivated ? 'Reactivated and promoted' : 'Promoted';
      console.log(`${what} superuser ${user.email} (${user.id})`);
    });
  });

program
  .command('rates:sync')
  .description('upsert rate plans by external_id from the JSON export of the central fee service')
  .argument('<file>', 'JSON array of {external_id, name, description, active, fees}')
  .action(async (file: string) => {
    const document = readJsonFile(file);
    await withApplication(async (app) => {
      const sync = app.get(RatePlansSyncService);
      const plans = sync.validate(document); // refuses the whole file before anything is written
      // Large files show a progress bar (redrawn on a terminal, a line a second otherwise).
      const bar =
        plans.length >= 50
          ? new SingleBar(
              { format: 'rate plans [{bar}] {percentage}% {value}/{total}', noTTYOutput: true, notTTYSchedule: 1000 },
              Presets.shades_classic,
            )
          : undefined;
      bar?.start(plans.length, 0);
      const summary = await sync.sync(document, (done) => bar?.update(done));
      bar?.stop();
      console.log(
        `Rate plans synchronised from ${file}: ${summary.total} in the file, ` +
          `${summary.created} created, ${summary.updated} updated, ${summary.unchanged} unchanged.`,
      );
    });
  });

program
  .command('seed:demo')
  .description(
    'load demo data (superuser, seller, plans, sub-accounts, transactions) and print curl lines; safe to run twice',
  )
  .option('--base-url <url>', 'the API address used in the printed curl lines (default: this PORT and HOST)')
  .action(async (options: { baseUrl?: string }) => {
    if (options.baseUrl !== undefined && !/^https?:\/\/[^/\s]+(\/\S*)?$/.test(options.baseUrl)) {
      throw new Error('--base-url must be an http(s) URL such as http://localhost:3000');
    }
    await withApplication(async (app) => {
      const config = app.get<AppConfig>(APP_CONFIG);
      const baseUrl = (options.baseUrl ?? localBaseUrl(config.host, config.port)).replace(/\/$/, '');
      const summary = await seedDemo(app);
      console.log(
        `Demo data ready (${summary.transactionsCreated} transactions and ${summary.postingsCreated} ledger postings created this run).`,
      );
      console.log(`  superuser: ${summary.admin.email} / ${summary.admin.password}`);
      console.log(
        `  seller:    ${summary.sellerId}  (sub-accounts: ${Object.entries(summary.subaccounts)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')})`,
      );
      console.log(`  plans:     rate ${summary.ratePlanId}, split ${summary.splitPlanId}`);
      console.log(`\nTry it (with \`npm start\` running at ${baseUrl}):\n`);
      for (const line of demoCurlLines(summary, baseUrl)) console.log(line);
    });
  });

program
  .command('subscriptions:renew')
  .description('run the subscription renewal job once: charge, retry, expire and cancel what is due as of --now')
  .option('--now <iso>', AS_OF)
  .action((options: { now?: string }) =>
    runAsOf(options.now, async (app, now) => {
      const summary = await app.get(SubscriptionRenewals).run(now);
      console.log(
        `Renewals as of ${now.toISOString()}: ${summary.charged} charged, ${summary.declined} declined, ` +
          `${summary.refused} refused by the platform, ` +
          `${summary.awaitingPix} pix charges sent, ${summary.outcomeUnknown} awaiting the processor, ` +
          `${summary.pastDue} past due, ${summary.canceled} canceled, ` +
          `${summary.recovered} interrupted charges recovered, ${summary.errors} errors.`,
      );
      if (summary.errors > 0) process.exitCode = 1;
    }),
  );

program
  .command('orders:expire')
  .description(
    'run the event order expiry job once: pending orders whose expires_at has passed as of --now expire, their charges are voided and their seats released',
  )
  .option('--now <iso>', AS_OF)
  .action((options: { now?: string }) =>
    runAsOf(options.now, async (app, now) => {
      const expired = await app.get(CheckoutService).expireDue(now);
      console.log(`Event orders expired as of ${now.toISOString()}: ${expired}.`);
    }),
  );

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
      // A reader that stops early (`| head`) closes the pipe: nothing is wrong with the document.
      process.stdout.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'EPIPE') process.exit(0);
        throw error;
      });
      process.stdout.write(document);
    }
  });

/**
 * Runs a job with the application's services as of `--now` (the current time without it). A job
 * run as of a later time charges or expires ahead of time (a subscription billed early, a pix
 * order released while its buyer pays): tests do that on purpose, a production database never.
 */
async function runAsOf(
  option: string | undefined,
  job: (app: INestApplicationContext, now: Date) => Promise<void>,
): Promise<void> {
  const now = option === undefined ? new Date() : parseDateTime(option);
  if (!now) throw new Error('--now must be an ISO 8601 time, e.g. 2027-03-31T12:00:00Z');
  await withApplication(async (app) => {
    if (app.get<AppConfig>(APP_CONFIG).env === 'production' && now.getTime() > Date.now()) {
      throw new Error('--now must not be later than the current time with NODE_ENV=production');
    }
    await job(app, now);
  });
}

function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`Cannot read ${file}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${file} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
}

/** Runs `work` with the application's services, without serving HTTP or running workers. */
async function withApplication(work: (app: INestApplicationContext) => Promise<void>): Promise<void> {
  const runtime = await prepareRuntime('cli', (m) => console.error(m));
  const app = await NestFactory.createApplicationContext(
    AppModule.register({ config: runtime.config, metrics: new HttpMetrics(), runWorkers: false }),
    { logger: new PinoNestLogger(createLogger('warn')) },
  );
  try {
    await work(app);
  } finally {
    await app.close();
    await runtime.release();
  }
}

program.parseAsync(process.argv).catch((error: unknown) => {
  if (error instanceof SyncFileError) {
    console.error(error.message);
    for (const [path, messages] of Object.entries(error.problems)) console.error(`  ${path}: ${messages.join('; ')}`);
  } else {
    console.error(error instanceof ConfigError ? error.message : `Error: ${(error as Error)?.message ?? error}`);
  }
  process.exit(1);
});
