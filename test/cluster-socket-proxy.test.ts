import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { MAX_FRAGMENT_VIEWERS } from '../engine/live/fmp4-channel';
import {
  analysingOff,
  fileCamera,
  type SiteEngine,
  siteOf,
  startSite,
  stopSite,
} from './helpers/cluster-engines';
import { signIn } from './helpers/engine-process';
import { settled } from './helpers/eventually';
import { ADMIN_PASSWORD } from './helpers/fixtures';
import { NatsCluster } from './helpers/nats-cluster';

// Two engines on one real NATS server, a camera (the fixture video, looping) on one of them: its
// low-latency video socket asked of the other node is proxied to the one that runs it, over real
// WebSockets and a real encoder.
let nats: NatsCluster;
let engines: SiteEngine[];
let taskId: string;

/**
 * A socket opened on `engine`: its messages, how it ended (a close code, or the handshake's HTTP
 * answer), and the node that serves it as the handshake's 101 names it (x-vc-node; none when served
 * where it was asked).
 */
interface Viewer {
  socket: WebSocket;
  servedBy: () => string | undefined;
  messages: Buffer[];
  first: Promise<Buffer>;
  ended: Promise<{ code: number; reason: string } | { status: number; body: { code: number; msg: string } }>;
}

function view(engine: SiteEngine, stream: string, token = engine.token, task = taskId): Viewer {
  const url = `${engine.url.replace(/^http/, 'ws')}/api/task/${task}/livestream/${stream}/socket?token=${encodeURIComponent(token)}`;
  const socket = new WebSocket(url);
  const messages: Buffer[] = [];
  let servedBy: string | undefined;
  socket.on('upgrade', (response) => {
    servedBy = response.headers['x-vc-node']?.toString();
  });
  const first = new Promise<Buffer>((done, fail) => {
    socket.on('message', (data: Buffer) => {
      messages.push(data);
      done(data);
    });
    socket.on('close', (code, reason) => fail(new Error(`closed ${code} ${reason}`)));
    socket.on('unexpected-response', () => fail(new Error('the handshake was refused')));
  });
  first.catch(() => {});
  const ended = new Promise<Awaited<Viewer['ended']>>((done) => {
    socket.on('close', (code, reason) => done({ code, reason: reason.toString() }));
    socket.on('unexpected-response', (_request, response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      response.on('end', () => done({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
    });
    socket.on('error', () => {});
  });
  return { socket, servedBy: () => servedBy, messages, first, ended };
}

const boxTypes = (data: Buffer) => {
  const types: string[] = [];
  for (let at = 0; at + 8 <= data.length; at += data.readUInt32BE(at)) {
    types.push(data.toString('latin1', at + 4, at + 8));
    if (data.readUInt32BE(at) < 8) break;
  }
  return types;
};

/**
 * The task's node and the other one, as the site says: once e1 sees the assignment too (beforeAll
 * waited for e2's view, which e1's may trail by a watch).
 */
function roles(): Promise<{ owner: SiteEngine; other: SiteEngine }> {
  return settled('the camera assigned, as e1 sees it', async () => {
    const node = (await siteOf(engines[0] as SiteEngine)).assignments[taskId]?.node;
    const owner = engines.find((engine) => engine.name === node);
    if (!owner) throw new Error(`task ${taskId} on ${node}`);
    return { owner, other: engines.find((engine) => engine !== owner) as SiteEngine };
  });
}

/** An AI video of the task, asked of the node that does not run it (proxied there over HTTP). */
const aiVideo = (asked: SiteEngine) =>
  settled('an AI video of the task', async () => {
    const live = await asked.call<{ stream: string }>('POST', `/api/task/${taskId}/ailive`, {
      app_ids: ['motion'],
    });
    return live.stream;
  });

beforeAll(async () => {
  nats = await NatsCluster.start(1);
  engines = await startSite(nats, 2);
  const owner = engines[0] as SiteEngine;
  taskId = (await fileCamera(owner, 'cam')).task_id;
  await settled('the camera analysing on its node', async () => {
    const site = await siteOf(engines[1] as SiteEngine);
    if (site.assignments[taskId]?.node !== owner.name) throw new Error('not assigned yet');
    return analysingOff(engines, engines[1] as SiteEngine, taskId, 'nobody');
  });
}, 120_000);

afterAll(async () => {
  await stopSite(engines ?? []);
  await nats?.dispose();
});

describe("the low-latency video of another node's camera", () => {
  it("is proxied to the node that runs it: the owner's init segment, then fragments", async () => {
    const { owner, other } = await roles();
    const stream = await aiVideo(other);
    const direct = view(owner, stream);
    const proxied = view(other, stream);
    const [own, got] = await Promise.all([direct.first, proxied.first]);
    expect(boxTypes(got)).toEqual(['ftyp', 'moov']);
    expect(got.equals(own)).toBe(true);
    expect([proxied.servedBy(), direct.servedBy()]).toEqual([owner.name, undefined]);
    await settled('fragments through the proxy', async () => {
      if (proxied.messages.length < 5) throw new Error(`${proxied.messages.length} messages`);
      return true;
    });
    expect(boxTypes(proxied.messages[1] as Buffer).slice(0, 2)).toEqual(['moof', 'mdat']);
    direct.socket.close();
    proxied.socket.close();
    expect(await proxied.ended).toMatchObject({ code: 1005 });
  }, 60_000);

  it("passes the owner's refusals and closes on as the owner sent them", async () => {
    const { owner, other } = await roles();
    // No such stream on the owner: its 4404, through the proxy.
    expect(await view(other, 'nope').ended).toMatchObject({ code: 4404 });
    // A token ended on the owner's side closes the proxied socket with the owner's 4401.
    const stream = await aiVideo(other);
    const token = await signIn(other.url, ADMIN_PASSWORD);
    const proxied = view(other, stream, token);
    await proxied.first;
    const out = await fetch(`${owner.url}/api/auth/logout`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(out.status).toBe(200);
    expect(await proxied.ended).toMatchObject({ code: 4401 });
  }, 60_000);

  it("takes the owner's viewer places while open, and gives them back when the viewer closes", async () => {
    const { other } = await roles();
    const stream = await aiVideo(other);
    for (let round = 0; round < 2; round++) {
      // A viewer the client closed must have closed on the owner too: else its places stay taken.
      const viewers = await settled(`round ${round}: ${MAX_FRAGMENT_VIEWERS} viewers`, async () => {
        const opened = Array.from({ length: MAX_FRAGMENT_VIEWERS }, () => view(other, stream));
        try {
          await Promise.all(opened.map((viewer) => viewer.first));
          return opened;
        } catch (error) {
          for (const viewer of opened) viewer.socket.terminate();
          throw error;
        }
      });
      expect(await view(other, stream).ended).toMatchObject({ code: 4429 });
      for (const viewer of viewers) viewer.socket.close();
      await Promise.all(viewers.map((viewer) => viewer.ended));
    }
  }, 90_000);

  it('answers 503 50307 when the owner does not answer the handshake', async () => {
    const { owner, other } = await roles();
    const stream = await aiVideo(other);
    // Frozen, its kernel still accepts the connection: only the proxy's time limit ends the wait.
    owner.signal('SIGSTOP');
    try {
      const ended = await view(other, stream).ended;
      expect(ended).toMatchObject({ status: 503, body: { code: 50307 } });
      expect(JSON.stringify(ended)).toContain(`runs on node ${owner.name}, which did not answer`);
    } finally {
      owner.signal('SIGCONT');
    }
  }, 30_000);

  it('closes the proxied socket when the owner is killed mid-stream', async () => {
    // The freeze above moves the camera (it outlasts the lease), and the move may still be under way
    // (an AI video made on the old owner was then asked of the new one: 4404, seen in CI). So the
    // stream is opened again until a node other than the one asked serves it, and the node that
    // serves it, as its handshake names it, is killed.
    const { owner, proxied } = await settled(
      'a proxied stream of the running camera',
      async () => {
        const { other } = await roles();
        const proxied = view(other, await aiVideo(other));
        try {
          // A socket that opens and stays silent is tried again too.
          const first = await Promise.race([proxied.first, sleep(15_000, null)]);
          if (!first) throw new Error('no message within 15 s');
          expect(boxTypes(first)).toEqual(['ftyp', 'moov']);
          const owner = engines.find((engine) => engine !== other && engine.name === proxied.servedBy());
          if (!owner) throw new Error(`served by ${proxied.servedBy() ?? 'the node asked'}`);
          return { owner, proxied };
        } catch (error) {
          proxied.socket.terminate();
          throw error;
        }
      },
      60_000,
    );
    await owner.kill();
    expect(await proxied.ended).toMatchObject({ code: 4503 });
  }, 90_000);
});
