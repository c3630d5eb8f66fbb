import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const PASSWORD = 'bench-admin-password';

export interface BenchEngine {
  url: string;
  token: string;
  pid: number;
  stop(): void;
}

/** The headless engine in its own process, as deployed, so the load generator does not share its CPU time slice. */
export async function spawnBenchEngine(): Promise<BenchEngine> {
  const dataDir = mkdtempSync(join(tmpdir(), 'vc-bench-'));
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', 'engine/cli.ts', '--port', '0', '--data-dir', dataDir],
    { cwd: ROOT, env: { ...process.env, VC_ADMIN_PASSWORD: PASSWORD }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((done, fail) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /engine listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) done(match[1]);
    });
    child.once('exit', (code) => fail(new Error(`engine exited with ${code}`)));
  });
  const answer = await fetch(`${url}/api/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  });
  const token = ((await answer.json()) as { data: { access_token: string } }).data.access_token;
  return {
    url,
    token,
    pid: child.pid as number,
    stop() {
      child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
