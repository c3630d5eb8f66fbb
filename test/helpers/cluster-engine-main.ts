// An engine process joined to a cluster, started from the options in VC_TEST_ENGINE (JSON). Stands in
// for `npm run engine -- --cluster ...` while the CLI's flags are added, and prints the line the CLI does.
import { startEngine } from '../../engine/engine';
import type { EngineOptions } from '../../engine/index';

const options = JSON.parse(process.env.VC_TEST_ENGINE ?? '{}') as EngineOptions;
const engine = await startEngine(options);
process.stdout.write(`engine listening on ${engine.url}\n`);
process.on('SIGTERM', () => {
  void engine.close().then(() => process.exit(0));
});
