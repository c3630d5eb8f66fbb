import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Manifest } from './manifest';
import { buildZapk, inspectZapk } from './zapk';

/**
 * npm run zapk -- build --manifest M.json --out P.zapk
 * npm run zapk -- inspect P.zapk
 * Exit codes: 0 done, 1 the package was refused or could not be written, 2 usage error.
 */

const USAGE = `usage:
  npm run zapk -- build --manifest <manifest.json> --out <package.zapk>
  npm run zapk -- inspect <package.zapk>`;

const APP_TYPES: Record<number, string> = { 1: 'detection', 2: 'change detection', 3: 'time-series' };

class UsageError extends Error {}

/** npm runs scripts from the package root; INIT_CWD is where the user typed the command. */
function userPath(path: string): string {
  return resolve(process.env.INIT_CWD ?? process.cwd(), path);
}

function describe(manifest: Manifest): string {
  const lines = [`${manifest.zapk_id} ${manifest.version}: ${manifest.name}`];
  for (const app of manifest.apps) {
    const classes = (app.rule.classes ?? []).map((c) => `${c.class_id} ${c.name}`).join(', ') || 'none';
    const license = app.perpetual
      ? 'perpetual'
      : `expires ${new Date(app.license_expire * 1000).toISOString()}`;
    lines.push(
      `  ${app.app_id}: type ${app.type} (${APP_TYPES[app.type]}), model ${app.model}, classes [${classes}], ${license}`,
    );
  }
  return lines.join('\n');
}

async function run(argv: string[]): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { manifest: { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) return USAGE;
  const [command, ...rest] = positionals;
  if (command === 'build' && rest.length === 0 && values.manifest && values.out) {
    const { manifest, bytes } = await buildZapk(userPath(values.manifest), userPath(values.out));
    return `built ${values.out} (${bytes} bytes)\n${describe(manifest)}`;
  }
  if (command === 'inspect' && rest.length === 1 && rest[0] && !values.manifest && !values.out) {
    return describe(await inspectZapk(userPath(rest[0])));
  }
  throw new UsageError(command === undefined ? 'missing command' : `invalid arguments for "${command}"`);
}

try {
  console.log(await run(process.argv.slice(2)));
} catch (error) {
  const usage =
    error instanceof UsageError || (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS');
  console.error(`error: ${(error as Error).message}`);
  if (usage) console.error(USAGE);
  process.exitCode = usage ? 2 : 1;
}
