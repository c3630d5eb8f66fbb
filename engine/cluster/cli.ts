import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { engineUsersConf, NODE_NAME } from './nats-users';
import type { LeaveState } from './site-view';

/**
 * npm run cluster -- nats-users --out DIR node1 node2 node3
 * Writes the NATS servers' authorization block for these nodes (DIR/engine-users.conf, included by
 * each server's nats.conf) and each node's password (DIR/<node>.password, for its
 * cluster.password_file), every file readable by its owner only: one NATS user per node, named as
 * the node, with the permissions of engine/cluster/nats-users.ts.
 *
 * npm run cluster -- leave [--url http://engine1:8080] [--user admin] [--password-file FILE]
 *   [--take <task id,...> | --take all-mine]
 * Takes the engine at --url out of its site: its cameras move to the other nodes make-before-break
 * (POST /api/cluster/leave) but for those named by --take, which move to it and leave the site with
 * it; this waits until it has left. The password comes from the file or
 * VC_ADMIN_PASSWORD (never a flag: ps shows flags). Exit codes: 0 left, 1 refused or not left in
 * time, 2 usage error.
 */

const USAGE = `usage:
  npm run cluster -- nats-users --out <folder> <node name>...
  npm run cluster -- leave [--url <engine URL>] [--user <name>] [--password-file <file>] [--timeout <s>]
                           [--take <task id>[,<task id>...] | --take all-mine]
  (the password from --password-file or VC_ADMIN_PASSWORD; --take: the tasks that leave the site with
  the node and run on there, all-mine: those it brought in)`;

/** How long leave waits by default: a node's cameras move a few at a time, each in seconds. */
const DEFAULT_TIMEOUT_S = 600;
const POLL_MS = 1_000;
/** One call to the engine: it answers at once, or is not answering. */
const CALL_TIMEOUT_MS = 10_000;
/** The call that starts a leave with --take: the node opens each taken source first (15 s each at most). */
const TAKE_CALL_TIMEOUT_MS = 300_000;

class UsageError extends Error {}

interface Envelope<T> {
  code: number;
  msg: string;
  data: T;
}

async function call<T>(
  url: string,
  path: string,
  init: RequestInit,
  timeoutMs = CALL_TIMEOUT_MS,
): Promise<T> {
  const answer = await fetch(`${url}${path}`, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  const envelope = (await answer.json()) as Envelope<T>;
  if (envelope.code !== 0) throw new Error(`${path}: ${envelope.code} ${envelope.msg}`);
  return envelope.data;
}

/** Random bytes of each node's NATS password (base64url). */
const NATS_PASSWORD_BYTES = 32;

function natsUsers(argv: string[], log: (line: string) => void): void {
  const { values, positionals: nodes } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { out: { type: 'string' } },
  });
  if (!values.out) throw new UsageError('--out <folder> is required');
  if (nodes.length === 0) throw new UsageError('name at least one node');
  const bad = nodes.find((node) => !NODE_NAME.test(node));
  if (bad !== undefined)
    throw new UsageError(`"${bad}" is no node name (letters, digits, _ and -, 64 at most)`);
  if (new Set(nodes).size !== nodes.length) throw new UsageError('a node is named twice');
  mkdirSync(values.out, { recursive: true, mode: 0o700 });
  const users = nodes.map((node) => ({
    node,
    user: node,
    password: randomBytes(NATS_PASSWORD_BYTES).toString('base64url'),
  }));
  const secret = { mode: 0o600 };
  for (const { node, password } of users)
    writeFileSync(join(values.out, `${node}.password`), `${password}\n`, secret);
  writeFileSync(join(values.out, 'engine-users.conf'), engineUsersConf(users), secret);
  log(
    `wrote ${join(values.out, 'engine-users.conf')} (for each NATS server) and a password file for each of ${nodes.join(', ')}`,
  );
}

async function leave(argv: string[], log: (line: string) => void): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: 'string', default: 'http://127.0.0.1:8080' },
      user: { type: 'string', default: 'admin' },
      'password-file': { type: 'string' },
      timeout: { type: 'string', default: String(DEFAULT_TIMEOUT_S) },
      take: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (positionals.length !== 0) throw new UsageError(`unknown arguments "${positionals.join(' ')}"`);
  const timeoutS = Number(values.timeout);
  if (!(timeoutS > 0)) throw new UsageError('--timeout must be a number of seconds above 0');
  const password = values['password-file']
    ? readFileSync(values['password-file'], 'utf8').trim()
    : process.env.VC_ADMIN_PASSWORD;
  if (!password) throw new UsageError('no password: --password-file or VC_ADMIN_PASSWORD');
  const named = (values.take ?? [])
    .flatMap((list) => list.split(','))
    .map((id) => id.trim())
    .filter(Boolean);
  if (values.take && named.length === 0) throw new UsageError('--take names no task');
  if (named.includes('all-mine') && named.length > 1)
    throw new UsageError('--take all-mine goes alone, without task ids');
  const take = named[0] === 'all-mine' ? 'all-mine' : named.length > 0 ? named : undefined;
  const url = values.url.replace(/\/+$/, '');
  const { access_token } = await call<{ access_token: string }>(url, '/api/auth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: values.user, password }),
  });
  const ask = () =>
    call<LeaveState>(url, '/api/cluster/leave', {
      method: 'POST',
      headers: { authorization: `Bearer ${access_token}` },
    });
  // The first call names what it takes (refused, with the reason, before anything starts); then it is asked where it stands.
  const start = () =>
    take === undefined
      ? ask()
      : call<LeaveState>(
          url,
          '/api/cluster/leave',
          {
            method: 'POST',
            headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ take }),
          },
          TAKE_CALL_TIMEOUT_MS,
        );
  const deadline = Date.now() + timeoutS * 1000;
  let last = '';
  for (let state = await start(); ; state = await ask()) {
    const kept = state.taking?.length
      ? `; ${state.taking.length} tasks run on there: ${state.taking.join(', ')}`
      : '';
    const line =
      state.state === 'left'
        ? `${state.node} left the site; its other cameras run on the other nodes${kept}. Take --cluster out of its settings before starting it again.`
        : `${state.node} is leaving: ${state.tasks} tasks still here${kept && `, of which it takes ${state.taking?.length}`}`;
    if (line !== last) log(line);
    last = line;
    if (state.state === 'left') return;
    if (Date.now() > deadline) throw new Error(`${state.node} did not leave within ${timeoutS} s`);
    await sleep(POLL_MS);
  }
}

async function main(argv: string[], log: (line: string) => void): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) return log(USAGE);
  const [command, ...rest] = argv;
  if (command === undefined) throw new UsageError('missing command');
  if (command === 'leave') return leave(rest, log);
  if (command === 'nats-users') return natsUsers(rest, log);
  throw new UsageError(`unknown command "${command}"`);
}

try {
  await main(process.argv.slice(2), (line) => console.log(line));
} catch (error) {
  console.error(`cluster: ${(error as Error).message}`);
  if (error instanceof UsageError) console.error(USAGE);
  process.exit(error instanceof UsageError ? 2 : 1);
}
