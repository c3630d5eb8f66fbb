/**
 * An engine in a process of its own (node --import tsx test/helpers/feed-engine.ts DATA_DIR) whose
 * outbox a test fills over IPC, so that the engine's memory is measured without the test runner's:
 * it answers {type: 'ready', url, token}, stores `count` events of `bytes` each on
 * {type: 'enqueue'} and answers {type: 'enqueued'}.
 */
import { startEngine } from '../../engine/index';
import { ADMIN_PASSWORD } from './fixtures';
import { message } from './receiver';

export interface EnqueueRequest {
  type: 'enqueue';
  taskId: string;
  count: number;
  bytes: number;
}

const send = (message: unknown) => process.send?.(message);
const dataDir = process.argv[2];
if (!dataDir || !process.send) throw new Error('usage: fork feed-engine.ts DATA_DIR (with an IPC channel)');

const engine = await startEngine({ dataDir, port: 0, adminPassword: ADMIN_PASSWORD, logLevel: 'warn' });
let seq = 0;
process.on('message', (request: EnqueueRequest) => {
  for (let i = 0; i < request.count; i++) {
    seq += 1;
    engine.outbox.enqueue(
      { task_id: request.taskId, report_url: '' },
      message(request.taskId, seq, request.bytes),
    );
  }
  send({ type: 'enqueued' });
});
process.once('disconnect', () => void engine.close().then(() => process.exit(0)));
send({ type: 'ready', url: engine.url, token: engine.issueToken().access_token });
