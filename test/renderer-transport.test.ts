import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DeliveryRecord, EngineEvent, EngineRequest, VisionConsoleApi } from '../preload/api';
import { createHttpTransport, requestToken } from '../renderer/src/transport/http';
import { createIpcTransport, installPackageViaDialog, ipcErrorMessage } from '../renderer/src/transport/ipc';
import {
  ApiError,
  apiPath,
  type FeedMessage,
  NO_ENVELOPE,
  toEnvelope,
} from '../renderer/src/transport/types';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const TOKEN = 'tok-0123456789abcdef';
let server: Server;
let baseUrl: string;
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (req.url === '/api/auth/token' && req.method === 'POST') {
        const { username, password } = JSON.parse(body) as { username: string; password: string };
        if (username === 'admin' && password === 'secret') {
          return send(200, {
            code: 0,
            msg: 'success',
            data: { access_token: TOKEN, token_type: 'Bearer', expires_in: 86400 },
          });
        }
        return send(401, { code: 40103, msg: 'wrong user name or password' });
      }
      if (req.url === '/api/html') {
        res.writeHead(502, { 'content-type': 'text/html' });
        return res.end('<html>bad gateway</html>');
      }
      if (req.headers.authorization !== `Bearer ${TOKEN}`)
        return send(401, { code: 40101, msg: 'missing token' });
      if (req.url === '/api/tasks') {
        return send(200, {
          code: 0,
          msg: 'success',
          data: [{ task_id: 't1', zapk_id: 'p', app_ids: ['a'], close_code: 0 }],
        });
      }
      if (req.url === '/api/task/nope' && req.method === 'DELETE')
        return send(404, { code: 40401, msg: 'task nope not found' });
      if (req.url === '/api/task' && req.method === 'POST') {
        return send(422, { code: 42201, msg: 'app_ids[0]: a1 is not a change-detection application' });
      }
      return send(200, { code: 0, msg: 'success', data: { method: req.method, url: req.url, body } });
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((done) => server.close(() => done())));

beforeEach(() => {
  seen.length = 0;
});

describe('http transport', () => {
  it('sends the Bearer token and parses the envelope', async () => {
    const transport = createHttpTransport({ baseUrl, getToken: () => TOKEN });
    expect(transport.kind).toBe('http');
    const envelope = await transport.request<Array<{ task_id: string }>>('GET', '/api/tasks');
    expect(envelope.code).toBe(0);
    expect(envelope.msg).toBe('success');
    expect(envelope.data[0]?.task_id).toBe('t1');
    expect(seen[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(seen[0]?.headers.accept).toBe('application/json');
  });

  it('sends JSON bodies and query parameters', async () => {
    const transport = createHttpTransport({ baseUrl, getToken: () => TOKEN });
    const envelope = await transport.request<{ url: string; body: string }>(
      'PUT',
      apiPath`/api/zapk/${'pkg/1'}/app/${'a 1'}`,
      { name: 'x', rule: { interval: 2 } },
      { query: { enhance: 1 } },
    );
    expect(envelope.data.url).toBe('/api/zapk/pkg%2F1/app/a%201?enhance=1');
    expect(JSON.parse(envelope.data.body)).toEqual({ name: 'x', rule: { interval: 2 } });
    expect(seen[0]?.headers['content-type']).toBe('application/json');
  });

  it('surfaces error envelopes as ApiError with status, code and msg', async () => {
    const transport = createHttpTransport({ baseUrl, getToken: () => TOKEN });
    const error = await transport.request('DELETE', '/api/task/nope').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 404, code: 40401, msg: 'task nope not found' });
    await expect(transport.request('POST', '/api/task', { mode: 'diff' })).rejects.toMatchObject({
      status: 422,
      code: 42201,
      msg: expect.stringContaining('change-detection'),
    });
  });

  it('calls onUnauthorized on 401 and sends no header without a token', async () => {
    const onUnauthorized = vi.fn();
    const transport = createHttpTransport({ baseUrl, getToken: () => null, onUnauthorized });
    await expect(transport.request('GET', '/api/tasks')).rejects.toMatchObject({ status: 401, code: 40101 });
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
    expect(seen[0]?.headers.authorization).toBeUndefined();
  });

  it('turns a body that is not an envelope, or no answer at all, into an ApiError', async () => {
    const transport = createHttpTransport({ baseUrl, getToken: () => TOKEN });
    await expect(transport.request('GET', '/api/html')).rejects.toMatchObject({
      status: 502,
      code: NO_ENVELOPE,
    });
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((done) => closed.close(() => done()));
    const dead = createHttpTransport({ baseUrl: deadUrl, getToken: () => TOKEN });
    await expect(dead.request('GET', '/api/tasks')).rejects.toMatchObject({ status: 0, code: NO_ENVELOPE });
  });

  it('requestToken exchanges user name and password for a token', async () => {
    const token = await requestToken('admin', 'secret', { baseUrl });
    expect(token).toEqual({ access_token: TOKEN, token_type: 'Bearer', expires_in: 86400 });
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ username: 'admin', password: 'secret' });
    await expect(requestToken('admin', 'wrong', { baseUrl })).rejects.toMatchObject({
      status: 401,
      code: 40103,
    });
  });
});

describe('ipc transport', () => {
  function fakeApi(answer: (request: EngineRequest) => Promise<{ status: number; body: unknown }>) {
    const calls: EngineRequest[] = [];
    const cancelled: string[] = [];
    const listeners: Array<(event: EngineEvent) => void> = [];
    const api: VisionConsoleApi = {
      request: (request) => {
        calls.push(request);
        return answer(request);
      },
      cancelRequest: async (requestId) => {
        cancelled.push(requestId);
        return null;
      },
      openZapk: async () => '/home/u/pkg.zapk',
      installZapk: async () => ({ status: 200, body: { code: 0, msg: 'success', data: { zapk_id: 'pkg' } } }),
      installZapkData: async () => ({ status: 200, body: { code: 0, msg: 'success' } }),
      info: async () => ({ version: '0.1.0', engineUrl: 'http://127.0.0.1:1' }),
      getSettings: async () => {
        throw new Error('not used here');
      },
      saveSettings: async () => {
        throw new Error('not used here');
      },
      chooseDataDir: async () => null,
      chooseMediaDir: async () => null,
      relaunch: async () => {},
      onEvent: (listener) => {
        listeners.push(listener);
        return () => listeners.splice(listeners.indexOf(listener), 1);
      },
      onDelivery: () => () => {},
      engineState: async () => ({ state: 'stopped' }),
      onEngineState: () => () => {},
    };
    return { api, calls, cancelled, listeners };
  }

  it('names a call the page may stop waiting for, and asks main to cancel it on abort', async () => {
    let fail: (error: Error) => void = () => undefined;
    const { api, calls, cancelled } = fakeApi(
      () =>
        new Promise((_, reject) => {
          fail = reject;
        }),
    );
    const transport = createIpcTransport(api);
    const stop = new AbortController();
    const waiting = transport.request(
      'POST',
      '/api/stream',
      { video_url: 'rtsp://cam' },
      { signal: stop.signal },
    );
    const requestId = calls[0]?.request_id;
    expect(requestId).toMatch(/^[A-Za-z0-9_-]{8,64}$/);
    stop.abort();
    expect(cancelled).toEqual([requestId]);
    // Main's aborted engine call fails the invoke: the page sees its own abort, not an engine error.
    fail(new Error("Error invoking remote method 'engine:request': Error: engine unreachable: aborted"));
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('passes method, path, query and body to main and unwraps the envelope', async () => {
    const { api, calls } = fakeApi(async () => ({
      status: 200,
      body: { code: 0, msg: 'success', data: [1] },
    }));
    const transport = createIpcTransport(api);
    expect(transport.kind).toBe('ipc');
    await expect(transport.request('GET', '/api/tasks', undefined, { query: { a: 1 } })).resolves.toEqual({
      code: 0,
      msg: 'success',
      data: [1],
    });
    await transport.request('POST', '/api/task', { zapk_id: 'p' });
    expect(calls).toEqual([
      { method: 'GET', path: '/api/tasks', query: { a: 1 } },
      { method: 'POST', path: '/api/task', body: { zapk_id: 'p' } },
    ]);
  });

  it('surfaces error envelopes and IPC refusals as ApiError', async () => {
    const failing = createIpcTransport(
      fakeApi(async () => ({ status: 404, body: { code: 40401, msg: 'task not found' } })).api,
    );
    await expect(failing.request('DELETE', '/api/task/x')).rejects.toMatchObject({
      status: 404,
      code: 40401,
    });
    const refused = createIpcTransport(
      fakeApi(async () => {
        throw new Error(
          "Error invoking remote method 'engine:request': IpcRefusedError: engine:request: path must start with /api/",
        );
      }).api,
    );
    await expect(refused.request('GET', '/x')).rejects.toMatchObject({
      status: 0,
      code: NO_ENVELOPE,
      msg: 'engine:request: path must start with /api/',
    });
  });

  it('installs a package through the dialog', async () => {
    const { api } = fakeApi(async () => ({ status: 200, body: { code: 0, msg: 'success' } }));
    await expect(installPackageViaDialog(api)).resolves.toMatchObject({ code: 0, data: { zapk_id: 'pkg' } });
    await expect(installPackageViaDialog({ ...api, openZapk: async () => null })).resolves.toBeNull();
  });
});

describe('envelope helpers', () => {
  it('toEnvelope accepts code 0 only', () => {
    expect(toEnvelope(200, { code: 0, msg: 'success', data: 1 }).data).toBe(1);
    expect(() => toEnvelope(200, { code: 50001, msg: 'boom' })).toThrow(ApiError);
    expect(() => toEnvelope(200, 'text')).toThrow(ApiError);
    expect(() => toEnvelope(200, { msg: 'no code' })).toThrow(ApiError);
  });

  it('ipcErrorMessage strips Electron’s prefix', () => {
    expect(ipcErrorMessage(new Error("Error invoking remote method 'app:info': Error: nope"))).toBe('nope');
    expect(ipcErrorMessage('plain')).toBe('plain');
  });

  it('apiPath encodes every interpolated value', () => {
    expect(apiPath`/api/task/${'../../x?y#z'}/image`).toBe('/api/task/..%2F..%2Fx%3Fy%23z/image');
  });
});

describe('live event feed', () => {
  const event = { event: 'task_closed', task_id: 't1', seq: 3 } as unknown as EngineEvent;
  const record = { event_id: 'e1', state: 'delivered' } as unknown as DeliveryRecord;

  it('ipc: events and delivery changes pushed by main reach the subscriber until it unsubscribes', () => {
    const events: Array<(event: EngineEvent) => void> = [];
    const deliveries: Array<(record: DeliveryRecord) => void> = [];
    const api = {
      onEvent: (listener: (event: EngineEvent) => void) => {
        events.push(listener);
        return () => events.splice(events.indexOf(listener), 1);
      },
      onDelivery: (listener: (record: DeliveryRecord) => void) => {
        deliveries.push(listener);
        return () => deliveries.splice(deliveries.indexOf(listener), 1);
      },
    } as unknown as VisionConsoleApi;
    const received: FeedMessage[] = [];
    const status: boolean[] = [];
    const unsubscribe = createIpcTransport(api).subscribe(
      (message) => received.push(message),
      (connected) => status.push(connected),
    );
    for (const listener of events) listener(event);
    for (const listener of deliveries) listener(record);
    unsubscribe();
    expect(events).toHaveLength(0);
    expect(deliveries).toHaveLength(0);
    expect(received).toEqual([
      { type: 'callback', body: event },
      { type: 'delivery', record },
    ]);
    expect(status).toEqual([true]);
  });

  it('http: reads the SSE feed with the token in the query: callbacks, deliveries and the connection', () => {
    const opened: FakeEventSource[] = [];
    class FakeEventSource extends EventTarget {
      closed = false;
      constructor(readonly url: string) {
        super();
        opened.push(this);
      }
      close() {
        this.closed = true;
      }
    }
    const transport = createHttpTransport({
      baseUrl: 'http://127.0.0.1:8080',
      getToken: () => 'tok en',
      EventSource: FakeEventSource as unknown as typeof EventSource,
    });
    const received: FeedMessage[] = [];
    const status: boolean[] = [];
    const unsubscribe = transport.subscribe(
      (message) => received.push(message),
      (connected) => status.push(connected),
    );
    const source = opened[0] as FakeEventSource;
    expect(source.url).toBe('http://127.0.0.1:8080/api/events/stream?token=tok+en');
    source.dispatchEvent(new Event('open'));
    source.dispatchEvent(new MessageEvent('callback', { data: JSON.stringify(event) }));
    source.dispatchEvent(new MessageEvent('delivery', { data: JSON.stringify(record) }));
    source.dispatchEvent(new MessageEvent('callback', { data: 'not json' }));
    source.dispatchEvent(new Event('error'));
    unsubscribe();
    source.dispatchEvent(new MessageEvent('callback', { data: JSON.stringify(event) }));
    expect(received).toEqual([
      { type: 'callback', body: event },
      { type: 'delivery', record },
    ]);
    expect(status).toEqual([true, false]);
    expect(source.closed).toBe(true);
  });
  it('http: opens a feed the engine refused again after 5 s, from the last event it had', () => {
    vi.useFakeTimers();
    try {
      const opened: Array<EventTarget & { url: string; readyState: number; closed: boolean }> = [];
      class FakeEventSource extends EventTarget {
        static readonly CLOSED = 2;
        readyState = 0;
        closed = false;
        constructor(readonly url: string) {
          super();
          opened.push(this);
        }
        close() {
          this.closed = true;
          this.readyState = 2;
        }
      }
      const transport = createHttpTransport({
        baseUrl: 'http://127.0.0.1:8080',
        getToken: () => 'tok',
        EventSource: FakeEventSource as unknown as typeof EventSource,
      });
      const received: FeedMessage[] = [];
      const unsubscribe = transport.subscribe((message) => received.push(message));
      const first = opened[0] as (typeof opened)[number];
      first.dispatchEvent(new MessageEvent('callback', { data: JSON.stringify(event), lastEventId: '41' }));
      // A dropped connection that EventSource retries itself: nothing to do.
      first.dispatchEvent(new Event('error'));
      vi.advanceTimersByTime(10_000);
      expect(opened).toHaveLength(1);
      // An answer that is no feed (503 while the engine serves as many as it may): EventSource gives up.
      first.readyState = 2;
      first.dispatchEvent(new Event('error'));
      vi.advanceTimersByTime(4_999);
      expect(opened).toHaveLength(1);
      vi.advanceTimersByTime(1);
      expect(opened.map((source) => source.url)).toEqual([
        'http://127.0.0.1:8080/api/events/stream?token=tok',
        'http://127.0.0.1:8080/api/events/stream?token=tok&last_event_id=41',
      ]);
      const second = opened[1] as (typeof opened)[number];
      second.dispatchEvent(new MessageEvent('delivery', { data: JSON.stringify(record), lastEventId: '42' }));
      expect(received).toEqual([
        { type: 'callback', body: event },
        { type: 'delivery', record },
      ]);
      unsubscribe();
      expect(second.closed).toBe(true);
      second.readyState = 2;
      second.dispatchEvent(new Event('error'));
      vi.advanceTimersByTime(10_000);
      expect(opened).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('packages and media', () => {
  it('http: uploads a picked .zapk as multipart field "file" with the token', async () => {
    const transport = createHttpTransport({ baseUrl, getToken: () => TOKEN });
    const file = new File(['PK\u0003\u0004 zapk bytes'], 'people.zapk');
    await expect(transport.installPackage(file)).resolves.toMatchObject({ code: 0 });
    const upload = seen[0] as Seen;
    expect(`${upload.method} ${upload.url}`).toBe('POST /api/zapk');
    expect(upload.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(upload.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(upload.body).toContain('name="file"; filename="people.zapk"');
    expect(upload.body).toContain('zapk bytes');
  });

  it('ipc: hands a dropped .zapk to main as bytes', async () => {
    const sent: Array<{ name: string; data: Uint8Array }> = [];
    const api = {
      installZapkData: async (zapk: { name: string; data: Uint8Array }) => {
        sent.push(zapk);
        return {
          status: 200,
          body: { code: 0, msg: 'success', data: { zapk_id: 'p', version: '1.0.0', upgraded: false } },
        };
      },
    } as unknown as VisionConsoleApi;
    const answer = await createIpcTransport(api).installPackage(
      new File([new Uint8Array([80, 75, 3, 4])], 'p.zapk'),
    );
    expect(answer.data).toEqual({ zapk_id: 'p', version: '1.0.0', upgraded: false });
    expect(sent).toHaveLength(1);
    expect(sent[0]?.name).toBe('p.zapk');
    expect([...(sent[0]?.data ?? [])]).toEqual([80, 75, 3, 4]);
  });

  it('http: loads engine media from the page origin with the token header; ipc leaves both to main', () => {
    const http = createHttpTransport({ baseUrl: 'http://192.168.1.20:8080', getToken: () => TOKEN });
    expect(http.mediaUrl('http://127.0.0.1:8080/api/stream/s1/index.m3u8?x=1')).toBe(
      'http://192.168.1.20:8080/api/stream/s1/index.m3u8?x=1',
    );
    expect(http.mediaUrl('/api/task/t1/livestream/v1/index.m3u8')).toBe(
      'http://192.168.1.20:8080/api/task/t1/livestream/v1/index.m3u8',
    );
    expect(http.mediaHeaders()).toEqual({ authorization: `Bearer ${TOKEN}` });
    expect(createHttpTransport({ baseUrl, getToken: () => null }).mediaHeaders()).toEqual({});
    const ipc = createIpcTransport({} as VisionConsoleApi);
    expect(ipc.mediaUrl('http://127.0.0.1:41000/api/stream/s1/index.m3u8')).toBe(
      'http://127.0.0.1:41000/api/stream/s1/index.m3u8',
    );
    expect(ipc.mediaHeaders()).toEqual({});
  });
});
