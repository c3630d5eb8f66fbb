// Over 400 lines on purpose: every IPC channel of main with its refusals, one block per channel.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EngineState } from '../engine/contract/engine-process';
import type { SettingsView } from '../preload/api';
import { Channels, PushChannels } from '../preload/channels';

/*
 * The 'electron' module is replaced by this mock ONLY because the Electron binary cannot be
 * downloaded or run on this machine. It stands in for ipcMain (records the handlers main registers),
 * dialog (returns a scripted file choice, and a scripted answer to a native confirmation) and
 * BrowserWindow.fromWebContents.
 */
const electron = vi.hoisted(() => ({
  handlers: new Map<string, (event: unknown, ...args: unknown[]) => Promise<unknown>>(),
  showOpenDialog: vi.fn<(...args: unknown[]) => Promise<{ canceled: boolean; filePaths: string[] }>>(),
  showMessageBox: vi.fn<(...args: unknown[]) => Promise<{ response: number }>>(),
}));
vi.mock('electron', () => ({
  ipcMain: {
    handle: (channel: string, handler: (event: unknown, ...args: unknown[]) => Promise<unknown>) => {
      if (electron.handlers.has(channel)) throw new Error(`second handler for ${channel}`);
      electron.handlers.set(channel, handler);
    },
    removeHandler: (channel: string) => electron.handlers.delete(channel),
  },
  dialog: { showOpenDialog: electron.showOpenDialog, showMessageBox: electron.showMessageBox },
  BrowserWindow: { fromWebContents: () => null },
}));

const { checkApiPath, registerIpc, MAX_JSON_BODY_BYTES, MAX_IMAGE_BODY_BYTES } = await import('../main/ipc');
const { registerEngineStateIpc } = await import('../main/engine-ipc');

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const APP_ORIGIN = 'app://console';
const appFrame = { url: 'app://console/index.html', parent: null };

let server: Server;
let engineUrl: string;
const seen: Seen[] = [];
/** Engine calls whose client (main) went away before an answer. */
const hungUp: string[] = [];
/** Tokens the server accepts; issueToken hands out token-1, token-2, ... */
const validTokens = new Set<string>();
let issued = 0;
let dispose: () => void;
/** The engine's supervision state as the stand-in supervisor has it, and what main pushed to the window. */
let engineState: EngineState = { state: 'starting', attempt: 0 };
const stateListeners = new Set<(state: EngineState) => void>();
const pushed: Array<[string, unknown]> = [];
let tmp: string;
/**
 * What the settings store was asked to save, and how often main was asked to relaunch. The stand-in
 * store keeps what it saved (as the file does), so main's next check sees it.
 */
const savedPatches: unknown[] = [];
let stored: SettingsView['saved'];
let relaunches = 0;
/** Passwords main asked the engine process to set. */
const resets: string[] = [];
const DEFAULT_MEDIA_DIRS = ['/data/media', '/home/op/Videos'];
const settingsView: SettingsView = {
  saved: { port: 0, lan: false, data_dir: '', media_dirs: null },
  running: {
    url: 'http://127.0.0.1:1',
    host: '127.0.0.1',
    port: 1,
    dataDir: '/data',
    mediaDirs: DEFAULT_MEDIA_DIRS,
  },
  defaultDataDir: '/data',
  defaultMediaDirs: DEFAULT_MEDIA_DIRS,
  portFromEnv: false,
};

function invoke(channel: string, args: unknown[], frame: unknown = appFrame): Promise<unknown> {
  const handler = electron.handlers.get(channel);
  if (!handler) return Promise.reject(new Error(`No handler registered for '${channel}'`));
  return handler({ senderFrame: frame, sender: {} }, ...args);
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      });
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (!validTokens.has(token)) return send(401, { code: 40102, msg: 'invalid or expired token' });
      if (req.url?.startsWith('/api/task/missing')) return send(404, { code: 40401, msg: 'task not found' });
      // Never answers: a source that does not open. Records when main's call goes away.
      if (req.url === '/api/stream') {
        res.on('close', () => hungUp.push(req.url ?? ''));
        return;
      }
      if (req.url === '/api/not-json') {
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<html></html>');
      }
      return send(200, { code: 0, msg: 'success', data: { method: req.method, url: req.url } });
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  engineUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  tmp = await mkdtemp(join(tmpdir(), 'vc-ipc-'));
});

afterAll(async () => {
  await new Promise<void>((done) => server.close(() => done()));
  await rm(tmp, { recursive: true, force: true });
});

beforeEach(() => {
  seen.length = 0;
  validTokens.clear();
  issued = 0;
  electron.showOpenDialog.mockReset();
  electron.showMessageBox.mockReset();
  resets.length = 0;
  savedPatches.length = 0;
  stored = settingsView.saved;
  relaunches = 0;
  engineState = { state: 'starting', attempt: 0 };
  pushed.length = 0;
  const stopState = registerEngineStateIpc({
    appOrigin: APP_ORIGIN,
    log: () => {},
    engine: {
      get state() {
        return engineState;
      },
      onState(listener) {
        stateListeners.add(listener);
        return () => stateListeners.delete(listener);
      },
    },
    window: () => ({
      isDestroyed: () => false,
      webContents: { send: (channel, state) => pushed.push([channel, state]) },
    }),
  });
  const stopIpc = registerIpc({
    appOrigin: APP_ORIGIN,
    version: '1.2.3',
    log: () => {},
    settings: {
      view: async () => ({ ...settingsView, saved: stored }),
      save: async (patch) => {
        savedPatches.push(patch);
        stored = { ...stored, ...patch };
        return { ...settingsView, saved: stored };
      },
    },
    relaunch: () => {
      relaunches++;
    },
    engine: {
      get url() {
        return engineUrl;
      },
      async issueToken() {
        issued++;
        const token = `token-${issued}`;
        validTokens.add(token);
        return { access_token: token, token_type: 'Bearer' as const, expires_in: 86_400 };
      },
      async resetPassword(password) {
        resets.push(password);
        // As the engine does: every admin token is revoked.
        validTokens.clear();
        return { status: 200, body: { code: 0, msg: 'success', data: { username: 'admin' } } };
      },
    },
  });
  dispose = () => {
    stopIpc();
    stopState();
  };
});

afterEach(() => dispose());

describe('channel registration', () => {
  it('registers exactly the channels of preload/channels.ts, and unknown channels have no handler', async () => {
    expect([...electron.handlers.keys()].sort()).toEqual(
      [
        'app:info',
        'app:relaunch',
        'dialog:chooseDataDir',
        'dialog:chooseMediaDir',
        'dialog:openZapk',
        'engine:cancelRequest',
        'engine:installZapk',
        'engine:installZapkData',
        'engine:request',
        'engine:state',
        'settings:get',
        'settings:save',
      ].sort(),
    );
    expect([...electron.handlers.keys()].sort()).toEqual(Object.values(Channels).sort());
    await expect(invoke('engine:eval', [{}])).rejects.toThrow(/No handler/);
  });

  it('engine:state answers the supervision state, pushes each change, and is checked like every channel', async () => {
    await expect(invoke(Channels.engineState, [null])).resolves.toEqual({ state: 'starting', attempt: 0 });
    const running: EngineState = { state: 'running', url: engineUrl, pid: 42, since: 1000, restarts: 1 };
    engineState = running;
    for (const listener of stateListeners) listener(running);
    await expect(invoke(Channels.engineState, [null])).resolves.toEqual(running);
    expect(pushed).toEqual([[PushChannels.engineState, running]]);
    await expect(invoke(Channels.engineState, [{}])).rejects.toThrow(/engine:state: invalid payload/);
    await expect(
      invoke(Channels.engineState, [null], { url: 'https://evil.example/', parent: null }),
    ).rejects.toThrow(/engine:state: sender is not the console page/);
    dispose();
    expect(stateListeners.size).toBe(0);
    dispose = () => {};
  });

  it('app:info answers version and engine URL', async () => {
    await expect(invoke(Channels.info, [null])).resolves.toEqual({ version: '1.2.3', engineUrl });
  });
});

describe('engine:request forwarding', () => {
  it('forwards a GET with the Bearer token and query, returning status and envelope', async () => {
    const result = await invoke(Channels.request, [
      { method: 'GET', path: '/api/zapk', query: { page: 2, all: true, q: 'a b' } },
    ]);
    expect(result).toEqual({
      status: 200,
      body: { code: 0, msg: 'success', data: { method: 'GET', url: '/api/zapk?page=2&all=true&q=a+b' } },
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers.authorization).toBe('Bearer token-1');
  });

  it('forwards a JSON body for POST and PUT', async () => {
    const body = { zapk_id: 'pkg', app_ids: ['a1'], video_url: '/tmp/x.mp4' };
    await invoke(Channels.request, [{ method: 'POST', path: '/api/task', body }]);
    expect(seen[0]?.method).toBe('POST');
    expect(seen[0]?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(seen[0]?.body.toString() ?? '')).toEqual(body);
  });

  it("aborts the engine call a page cancels by its request_id, and only that page's", async () => {
    hungUp.length = 0;
    const waiting = invoke(Channels.request, [
      {
        method: 'POST',
        path: '/api/stream',
        body: { video_url: 'rtsp://cam' },
        request_id: 'wizard-probe-1',
      },
    ]);
    await expect.poll(() => seen.length).toBe(1);
    // Another page's cancel (another sender) of the same name does nothing.
    await electron.handlers.get(Channels.cancelRequest)?.(
      { senderFrame: appFrame, sender: { id: 2 } },
      { request_id: 'wizard-probe-1' },
    );
    await new Promise((done) => setTimeout(done, 100));
    expect(hungUp).toEqual([]);
    await expect(invoke(Channels.cancelRequest, [{ request_id: 'wizard-probe-1' }])).resolves.toBeNull();
    await expect(waiting).rejects.toThrow(/engine unreachable/);
    await expect.poll(() => hungUp).toEqual(['/api/stream']);
    // Names are checked like every payload; an unknown one is no error (its call may have ended).
    await expect(invoke(Channels.cancelRequest, [{ request_id: 'x' }])).rejects.toThrow(/invalid payload/);
    await expect(invoke(Channels.cancelRequest, [{ request_id: 'ended-call-9' }])).resolves.toBeNull();
    await expect(
      invoke(Channels.request, [{ method: 'GET', path: '/api/tasks', request_id: 'bad id with spaces' }]),
    ).rejects.toThrow(/invalid payload/);
  });

  it('passes error envelopes through with their HTTP status', async () => {
    const result = await invoke(Channels.request, [{ method: 'DELETE', path: '/api/task/missing' }]);
    expect(result).toEqual({ status: 404, body: { code: 40401, msg: 'task not found' } });
  });

  it('reuses the token, and renews it once when the engine answers 401', async () => {
    await invoke(Channels.request, [{ method: 'GET', path: '/api/tasks' }]);
    await invoke(Channels.request, [{ method: 'GET', path: '/api/tasks' }]);
    expect(issued).toBe(1);
    validTokens.clear(); // e.g. the token was revoked
    const result = (await invoke(Channels.request, [{ method: 'GET', path: '/api/tasks' }])) as {
      status: number;
    };
    expect(result.status).toBe(200);
    expect(issued).toBe(2);
    expect(seen.map((s) => s.headers.authorization)).toEqual([
      'Bearer token-1',
      'Bearer token-1',
      'Bearer token-1',
      'Bearer token-2',
    ]);
  });

  it('reports a non-JSON answer as an error instead of passing HTML on', async () => {
    await expect(invoke(Channels.request, [{ method: 'GET', path: '/api/not-json' }])).rejects.toThrow(
      /not JSON/,
    );
  });
});

describe('engine:request refusals (nothing reaches the engine)', () => {
  afterEach(() => expect(seen).toHaveLength(0));

  it('refuses senders other than the console page', async () => {
    const request = { method: 'GET', path: '/api/zapk' };
    for (const frame of [
      { url: 'https://evil.example/', parent: null },
      { url: 'file:///home/user/evil.html', parent: null },
      { url: 'app://console.evil/index.html', parent: null },
      { url: 'app://console/index.html', parent: { url: 'app://console/index.html' } },
      null,
      {
        get url(): string {
          throw new Error('Render frame was disposed');
        },
        parent: null,
      },
    ]) {
      await expect(invoke(Channels.request, [request], frame)).rejects.toThrow(
        /sender is not the console page/,
      );
    }
  });

  it('refuses payloads that do not match the schema', async () => {
    for (const args of [
      [],
      [null],
      ['GET /api/zapk'],
      [{ path: '/api/zapk' }],
      [{ method: 'PATCH', path: '/api/zapk' }],
      [{ method: 'get', path: '/api/zapk' }],
      [{ method: 'GET', path: 42 }],
      [{ method: 'GET', path: '/api/zapk', headers: { authorization: 'x' } }],
      [{ method: 'GET', path: '/api/zapk', query: { a: { nested: 1 } } }],
      [{ method: 'GET', path: '/api/zapk' }, 'extra'],
    ]) {
      await expect(invoke(Channels.request, args), JSON.stringify(args)).rejects.toThrow(/engine:request/);
    }
  });

  it('refuses paths outside /api/, traversal and smuggled queries', async () => {
    for (const path of [
      '/health',
      'api/zapk',
      '/apix/zapk',
      'http://evil.example/api/zapk',
      '//evil.example/api/zapk',
      '/api/../etc/passwd',
      '/api/%2e%2e/admin',
      '/api/task/..%2F..%2Fadmin',
      '/api/task/%2F',
      '/api/./zapk',
      '/api//zapk',
      '/api/zapk?x=1',
      '/api/zapk#x',
      '/api/zapk\\..\\x',
      '/api/zapk/%zz',
      '/api/zapk/a%00b',
      '/api/auth/token',
      '/api/%61uth/token',
    ]) {
      await expect(invoke(Channels.request, [{ method: 'GET', path }]), path).rejects.toThrow(
        /engine:request/,
      );
    }
  });

  it('refuses a body on GET/DELETE and bodies over 1 MiB', async () => {
    await expect(invoke(Channels.request, [{ method: 'GET', path: '/api/zapk', body: {} }])).rejects.toThrow(
      /takes no body/,
    );
    const big = { blob: 'x'.repeat(MAX_JSON_BODY_BYTES) };
    await expect(
      invoke(Channels.request, [{ method: 'POST', path: '/api/task', body: big }]),
    ).rejects.toThrow(/1 MiB/);
  });
});

describe('checkApiPath', () => {
  it('accepts ordinary API paths with encoded ids', () => {
    expect(checkApiPath('/api/zapk')).toBeNull();
    expect(checkApiPath('/api/task/0b7c5a4e-2f4d-4c1e-9d3b-5a0f3e9f1c2a/image')).toBeNull();
    expect(checkApiPath('/api/zapk/com.example.pkg/app/person%20v2')).toBeNull();
    expect(checkApiPath('/api/task/t1/livestream/s-1')).toBeNull();
  });
});

describe('package install', () => {
  it('uploads only a path the dialog returned, once, as multipart field "file"', async () => {
    const file = join(tmp, 'people.zapk');
    await writeFile(file, 'PK\u0003\u0004 fake zapk');

    await expect(invoke(Channels.installZapk, [{ path: file }])).rejects.toThrow(
      /not chosen in the package dialog/,
    );
    expect(seen).toHaveLength(0);

    electron.showOpenDialog.mockResolvedValueOnce({ canceled: false, filePaths: [file] });
    await expect(invoke(Channels.openZapk, [null])).resolves.toBe(file);
    const options = electron.showOpenDialog.mock.calls[0]?.[0] as {
      filters: Array<{ extensions: string[] }>;
    };
    expect(options.filters[0]?.extensions).toEqual(['zapk']);

    const result = (await invoke(Channels.installZapk, [{ path: file }])) as { status: number };
    expect(result.status).toBe(200);
    expect(seen).toHaveLength(1);
    const upload = seen[0] as Seen;
    expect(upload.method).toBe('POST');
    expect(upload.url).toBe('/api/zapk');
    expect(upload.headers.authorization).toBe('Bearer token-1');
    expect(upload.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const text = upload.body.toString('latin1');
    expect(text).toContain('Content-Disposition: form-data; name="file"; filename="people.zapk"');
    expect(text).toContain('PK\u0003\u0004 fake zapk');

    // The grant is single-use.
    await expect(invoke(Channels.installZapk, [{ path: file }])).rejects.toThrow(/not chosen/);
    expect(seen).toHaveLength(1);
  });

  it('a cancelled dialog grants nothing; non-.zapk choices and bad payloads are refused', async () => {
    electron.showOpenDialog.mockResolvedValueOnce({ canceled: true, filePaths: [] });
    await expect(invoke(Channels.openZapk, [null])).resolves.toBeNull();

    electron.showOpenDialog.mockResolvedValueOnce({ canceled: false, filePaths: [join(tmp, 'notes.txt')] });
    await expect(invoke(Channels.openZapk, [null])).rejects.toThrow(/\.zapk/);
    await expect(invoke(Channels.installZapk, [{ path: join(tmp, 'notes.txt') }])).rejects.toThrow(
      /not chosen/,
    );

    await expect(invoke(Channels.openZapk, [{ path: '/etc/passwd' }])).rejects.toThrow(/invalid payload/);
    await expect(invoke(Channels.installZapk, [{ path: '' }])).rejects.toThrow(/invalid payload/);
    await expect(invoke(Channels.installZapk, ['/etc/passwd'])).rejects.toThrow(/invalid payload/);
    await expect(
      invoke(Channels.openZapk, [null], { url: 'https://evil.example/', parent: null }),
    ).rejects.toThrow(/sender/);
    expect(electron.showOpenDialog).toHaveBeenCalledTimes(2);
    expect(seen).toHaveLength(0);
  });
});

describe('admin password and image uploads through engine:request', () => {
  it('resets the admin password through the engine process only once the operator confirms it in a native dialog', async () => {
    const reset = { method: 'PUT', path: '/api/auth/password', body: { password: 'new-password' } };
    // Cancelled (the dialog's default): nothing is set, nothing goes to the engine.
    electron.showMessageBox.mockResolvedValueOnce({ response: 0 });
    await expect(invoke(Channels.request, [reset])).rejects.toThrow(
      /cancelled: the admin password was not changed/,
    );
    expect(resets).toEqual([]);
    const [question] = electron.showMessageBox.mock.calls[0] as [Record<string, unknown>];
    expect(question).toMatchObject({
      type: 'warning',
      message: 'Set a new admin password?',
      buttons: ['Cancel', 'Set password'],
      defaultId: 0,
      cancelId: 0,
    });
    // Confirmed: set by the engine process's own channel, main holding no current password; never
    // sent over HTTP with main's token. Any spelling of the path is the same endpoint.
    electron.showMessageBox.mockResolvedValueOnce({ response: 1 });
    const answer = await invoke(Channels.request, [reset]);
    expect(answer).toEqual({ status: 200, body: { code: 0, msg: 'success', data: { username: 'admin' } } });
    electron.showMessageBox.mockResolvedValueOnce({ response: 0 });
    await expect(invoke(Channels.request, [{ ...reset, path: '/api/auth/%70assword' }])).rejects.toThrow(
      /cancelled/,
    );
    expect(resets).toEqual(['new-password']);
    expect(seen).toHaveLength(0);
    // Main's token went with the reset: its next call signs in afresh.
    const after = (await invoke(Channels.request, [{ method: 'GET', path: '/api/tasks' }])) as {
      status: number;
    };
    expect(after.status).toBe(200);
    expect(issued).toBe(1);
  });

  it('refuses a malformed reset without asking, and nothing else under /api/auth/', async () => {
    for (const body of [{ password: 5 }, { password: 'new-password', current_password: 'x' }, {}]) {
      await expect(
        invoke(Channels.request, [{ method: 'PUT', path: '/api/auth/password', body }]),
        JSON.stringify(body),
      ).rejects.toThrow(/a password reset takes/);
    }
    for (const request of [
      { method: 'GET', path: '/api/auth/password' },
      { method: 'POST', path: '/api/auth/password', body: {} },
      { method: 'PUT', path: '/api/auth/token', body: {} },
      { method: 'POST', path: '/api/auth/link', body: { paths: ['/api/task/t/snapshot'] } },
    ]) {
      await expect(invoke(Channels.request, [request]), JSON.stringify(request)).rejects.toThrow(
        /not available to the console/,
      );
    }
    expect(electron.showMessageBox).not.toHaveBeenCalled();
    expect(resets).toEqual([]);
    expect(seen).toHaveLength(0);
  });

  it('takes base64 image uploads over 1 MiB on the image endpoints only', async () => {
    const image = { image: 'A'.repeat(2 * MAX_JSON_BODY_BYTES) };
    const result = (await invoke(Channels.request, [
      { method: 'POST', path: '/api/task/t1/image', body: image },
    ])) as { status: number };
    expect(result.status).toBe(200);
    expect(seen[0]?.body.length).toBe(JSON.stringify(image).length);
    await expect(
      invoke(Channels.request, [{ method: 'POST', path: '/api/task/t1/optimization', body: image }]),
    ).rejects.toThrow(/larger than 1 MiB/);
    expect(MAX_IMAGE_BODY_BYTES).toBeGreaterThan(Math.ceil((2 * 20 * 1024 * 1024 * 4) / 3));
    expect(seen).toHaveLength(1);
  });
});

describe('dropped packages (engine:installZapkData)', () => {
  it('uploads the bytes as multipart field "file" under the dropped name', async () => {
    const data = new TextEncoder().encode('PK\u0003\u0004 dropped zapk');
    const result = (await invoke(Channels.installZapkData, [{ name: 'people.zapk', data }])) as {
      status: number;
    };
    expect(result.status).toBe(200);
    const upload = seen[0] as Seen;
    expect(`${upload.method} ${upload.url}`).toBe('POST /api/zapk');
    expect(upload.headers.authorization).toBe('Bearer token-1');
    const text = upload.body.toString('latin1');
    expect(text).toContain('Content-Disposition: form-data; name="file"; filename="people.zapk"');
    expect(text).toContain('PK\u0003\u0004 dropped zapk');
  });

  it('refuses what is not bytes, no bytes, another name or a path in the name', async () => {
    for (const payload of [
      { name: 'people.zapk', data: 'PK' },
      { name: 'people.zapk', data: [80, 75] },
      { name: 'people.zapk', data: new Uint8Array(0) },
      { name: 'people.zip', data: new Uint8Array([1]) },
      { name: 'people.zapk', data: new Uint8Array([1]), path: '/etc/passwd' },
    ]) {
      await expect(invoke(Channels.installZapkData, [payload]), payload.name).rejects.toThrow(
        /engine:installZapkData/,
      );
    }
    expect(seen).toHaveLength(0);
  });
});

describe('desktop settings channels', () => {
  it('reads and saves settings; a data folder must come from the folder dialog, once', async () => {
    await expect(invoke(Channels.getSettings, [null])).resolves.toEqual(settingsView);
    electron.showMessageBox.mockResolvedValueOnce({ response: 1 });
    await invoke(Channels.saveSettings, [{ port: 9100, lan: true }]);
    await expect(invoke(Channels.saveSettings, [{ data_dir: '/srv/vision' }])).rejects.toThrow(
      /not chosen in the folder dialog/,
    );

    electron.showOpenDialog.mockResolvedValueOnce({ canceled: false, filePaths: ['/srv/vision'] });
    await expect(invoke(Channels.chooseDataDir, [null])).resolves.toBe('/srv/vision');
    const options = electron.showOpenDialog.mock.calls[0]?.[0] as { properties: string[] };
    expect(options.properties).toContain('openDirectory');
    await invoke(Channels.saveSettings, [{ data_dir: '/srv/vision' }]);
    await expect(invoke(Channels.saveSettings, [{ data_dir: '/srv/vision' }])).rejects.toThrow(
      /folder dialog/,
    );
    // "" (back to the default folder) needs no dialog.
    await invoke(Channels.saveSettings, [{ data_dir: '' }]);
    expect(savedPatches).toEqual([{ port: 9100, lan: true }, { data_dir: '/srv/vision' }, { data_dir: '' }]);
  });

  it('exposes the engine on the LAN only once the operator confirms it in a native dialog', async () => {
    electron.showMessageBox.mockResolvedValueOnce({ response: 0 });
    await expect(invoke(Channels.saveSettings, [{ lan: true, port: 8080 }])).rejects.toThrow(
      /cancelled: the engine stays on this computer only/,
    );
    expect(savedPatches).toEqual([]);
    const [question] = electron.showMessageBox.mock.calls[0] as [Record<string, unknown>];
    expect(question).toMatchObject({
      type: 'warning',
      message: 'Expose the engine on the local network?',
      buttons: ['Cancel', 'Expose on the network'],
      cancelId: 0,
    });
    electron.showMessageBox.mockResolvedValueOnce({ response: 1 });
    await invoke(Channels.saveSettings, [{ lan: true }]);
    // Staying on this computer, or another port, needs no question.
    await invoke(Channels.saveSettings, [{ lan: false, port: 9000 }]);
    expect(savedPatches).toEqual([{ lan: true }, { lan: false, port: 9000 }]);
    expect(electron.showMessageBox).toHaveBeenCalledTimes(2);
  });

  it('refuses settings that do not match the schema, and relaunches on request', async () => {
    for (const patch of [{}, { port: 70000 }, { port: '80' }, { lan: 'yes' }, { host: '0.0.0.0' }, null]) {
      await expect(invoke(Channels.saveSettings, [patch]), JSON.stringify(patch)).rejects.toThrow(
        /invalid payload/,
      );
    }
    expect(savedPatches).toHaveLength(0);
    await invoke(Channels.relaunch, [null]);
    expect(relaunches).toBe(1);
    await expect(
      invoke(Channels.relaunch, [null], { url: 'https://evil.example/', parent: null }),
    ).rejects.toThrow(/sender/);
    expect(relaunches).toBe(1);
  });

  it('adds a media folder only through the native folder dialog; listed ones may be dropped or reordered', async () => {
    // A folder the page names itself is refused: nothing is saved.
    await expect(
      invoke(Channels.saveSettings, [{ media_dirs: [...DEFAULT_MEDIA_DIRS, '/etc'] }]),
    ).rejects.toThrow(/a new media folder was not chosen in the folder dialog/);
    // A folder chosen as the data folder is no media folder.
    electron.showOpenDialog.mockResolvedValueOnce({ canceled: false, filePaths: ['/srv/vision'] });
    await invoke(Channels.chooseDataDir, [null]);
    await expect(invoke(Channels.saveSettings, [{ media_dirs: ['/srv/vision'] }])).rejects.toThrow(
      /not chosen in the folder dialog/,
    );
    expect(savedPatches).toEqual([]);

    // Cancelled: nothing chosen, nothing granted.
    electron.showOpenDialog.mockResolvedValueOnce({ canceled: true, filePaths: [] });
    await expect(invoke(Channels.chooseMediaDir, [null])).resolves.toBeNull();
    electron.showOpenDialog.mockResolvedValueOnce({ canceled: false, filePaths: ['/srv/clips'] });
    await expect(invoke(Channels.chooseMediaDir, [null])).resolves.toBe('/srv/clips');
    const options = electron.showOpenDialog.mock.calls.at(-1)?.[0] as { title: string; properties: string[] };
    expect(options).toEqual({ title: 'Add a media folder', properties: ['openDirectory'] });
    const added = [...DEFAULT_MEDIA_DIRS, '/srv/clips'];
    await expect(invoke(Channels.saveSettings, [{ media_dirs: added }])).resolves.toMatchObject({
      saved: { media_dirs: added },
    });

    // Listed folders need no dialog: drop one, reorder, or go back to the defaults (null).
    await invoke(Channels.saveSettings, [{ media_dirs: ['/srv/clips', '/data/media'] }]);
    await invoke(Channels.saveSettings, [{ media_dirs: null }]);
    // The grant was used: with the defaults back, /srv/clips is a new folder again.
    await expect(invoke(Channels.saveSettings, [{ media_dirs: ['/srv/clips'] }])).rejects.toThrow(
      /not chosen in the folder dialog/,
    );
    expect(savedPatches).toEqual([
      { media_dirs: added },
      { media_dirs: ['/srv/clips', '/data/media'] },
      { media_dirs: null },
    ]);
  });

  it('refuses a file system root from the media-folder dialog, and grants it nothing', async () => {
    electron.showOpenDialog.mockResolvedValueOnce({ canceled: false, filePaths: ['/'] });
    await expect(invoke(Channels.chooseMediaDir, [null])).rejects.toThrow(
      /dialog:chooseMediaDir: the folder is the root of a file system/,
    );
    await expect(invoke(Channels.saveSettings, [{ media_dirs: ['/'] }])).rejects.toThrow(/folder dialog/);
    expect(savedPatches).toEqual([]);
  });

  it('refuses media-folder payloads that are not what the channels expect, before any dialog', async () => {
    const many = Array.from({ length: 33 }, (_, i) => `/data/media/${i}`);
    for (const media_dirs of ['/data/media', [], [''], [7], ['/data/media', '/data/media'], many, {}]) {
      await expect(
        invoke(Channels.saveSettings, [{ media_dirs }]),
        JSON.stringify(media_dirs).slice(0, 40),
      ).rejects.toThrow(/settings:save: invalid payload: payload.media_dirs/);
    }
    // The dialog takes no argument: a page cannot suggest the folder.
    for (const payload of [{ path: '/etc' }, '/etc', ['/etc']]) {
      await expect(invoke(Channels.chooseMediaDir, [payload])).rejects.toThrow(
        /dialog:chooseMediaDir: invalid payload/,
      );
    }
    await expect(invoke(Channels.chooseMediaDir, [null, '/etc'])).rejects.toThrow(/a single payload/);
    await expect(
      invoke(Channels.chooseMediaDir, [null], { url: 'https://evil.example/', parent: null }),
    ).rejects.toThrow(/sender is not the console page/);
    expect(electron.showOpenDialog).not.toHaveBeenCalled();
    expect(savedPatches).toEqual([]);
  });
});
