import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import packageJson from '../package.json';
import { buildApi, createServer } from './api/app';
import { advertisedHosts } from './api/host-check';
import { linkScopeKey } from './api/links';
import { uploadMemory } from './api/upload-memory';
import { AuditRepository } from './audit/audit-repository';
import { AuditTrail } from './audit/audit-trail';
import { Accounts, ADMIN_USER } from './auth/accounts';
import { AccountsRepository } from './auth/accounts-repository';
import { hasInitialPassword, removeInitialPassword, writeInitialPassword } from './auth/initial-password';
import { DEFAULT_LOGIN_LIMITS } from './auth/login-limiter';
import { passwordProblem } from './auth/password-policy';
import { randomPassword } from './auth/passwords';
import { StreamTokens } from './auth/stream-tokens';
import { DefaultReceiver } from './callbacks/default-receiver';
import { HeldEvents } from './callbacks/held-events';
import { MqttPublisher } from './callbacks/mqtt';
import { loadMqttSettings, type MqttSettings } from './callbacks/mqtt-settings';
import { Outbox } from './callbacks/outbox';
import { OutboxRepository } from './callbacks/outbox-repository';
import { startRetention } from './callbacks/retention';
import { wireTaskEvents } from './callbacks/task-events';
import { DeliveryWorker } from './callbacks/worker';
import { AlarmClips, clipLinkScope } from './clips/alarm-clips';
import { CLIP_BUFFER_LIMITS, ClipBuffers } from './clips/clip-buffers';
import { ClipFiles } from './clips/clip-files';
import { ClipsRepository } from './clips/clips-repository';
import { systemClock } from './clock';
import { ClusterNode } from './cluster/cluster-node';
import { findNatsServer } from './cluster/nats-binary';
import { SiteAccounts } from './cluster/site-accounts';
import { checkEngineOptions } from './config/options';
import { DEFAULT_HWACCEL } from './config/schema';
import { DEFAULT_MEDIA_DIR } from './contract/media-folders';
import { EventBus } from './events/bus';
import { AlarmReview } from './events/review';
import { ReviewItems } from './events/review-items';
import { ReviewItemsRepository } from './events/review-items-repository';
import { ReviewRepository } from './events/review-repository';
import { ImageAnalysis } from './images/analysis';
import type { Engine, EngineOptions } from './index';
import { gpuInUse, probeGpu } from './inference/gpu-use';
import { InferencePool, POOL_DEFAULTS } from './inference/pool';
import { HlsRoot } from './live/hls-files';
import { aiVideoSlots, LIVE_DEFAULTS } from './live/limits';
import { PreviewStreams } from './live/preview';
import { createEngineLogger } from './log/logger';
import { logOperations } from './log/operations-log';
import { displayUrl } from './log/scrub';
import { findFfmpeg } from './media/ffmpeg';
import { FrameSource } from './media/frame-source';
import { DecodePath, type ResolvedHwaccel, resolveHwaccel } from './media/hwaccel';
import { MainRecorder } from './media/main-recorder';
import { MediaFolders } from './media/media-folders';
import { probeFirstFrame } from './media/probe';
import { reconnectPolicyOf } from './media/reconnect-policy';
import { DEFAULT_MAX_SOURCE_PIXELS } from './media/source-limits';
import { parseSourceUrl } from './media/source-url';
import { StreamWatchdog } from './media/stream-watchdog';
import { OptimizationRepository } from './optimization/optimization-repository';
import { Optimizations } from './optimization/service';
import { PackagesRepository } from './packages/packages-repository';
import { PackageRegistry } from './packages/registry';
import { createDetector } from './pipeline/detectors';
import { FrameSnapshots } from './pipeline/frame-snapshots';
import { VideoAnalysis } from './pipeline/video-analysis';
import { lockDataDir } from './store/data-dir-lock';
import { type Db, openDb } from './store/db';
import { writeUnlessFull } from './store/disk-full';
import { makePrivate } from './store/private-dir';
import { SettingsRepository } from './store/settings-repository';
import { engineLoopLag, lagOverload } from './system/loop-lag';
import { SystemMonitor } from './system/monitor';
import { DEFAULT_ANALYSIS_FPS, TASK_LIMITS } from './tasks/limits';
import { PackageUse } from './tasks/package-use';
import { TaskRegistry } from './tasks/registry';
import { TaskRepository } from './tasks/task-repository';

/**
 * Where assets/builtin sits beside the engine's code: a folder up from the sources (engine/), two from
 * the bundle (out/main/). The packaged desktop app passes its own (resources/assets/builtin).
 */
export const BUILTIN_PACKAGE_DIR = builtinBesideCode(dirname(fileURLToPath(import.meta.url)));

function builtinBesideCode(codeDir: string): string {
  const candidates = [
    join(codeDir, '..', 'assets', 'builtin'),
    join(codeDir, '..', '..', 'assets', 'builtin'),
  ];
  return candidates.find((dir) => existsSync(join(dir, 'manifest.json'))) ?? (candidates[0] as string);
}
const BUILTIN_INSTALLED = 'builtin_package_installed';

/** Opens the data dir, seeds what a first start needs, resumes live tasks and serves the API. */
export async function startEngine(options: EngineOptions): Promise<Engine> {
  // In-process callers are held to the ranges the command line is.
  checkEngineOptions(options);
  const clock = options.clock ?? systemClock;
  const dataDir = resolve(options.dataDir);
  // Taken before anything in the data dir is touched; held until close() or the process dies.
  const lock = lockDataDir(dataDir);
  let db: Db;
  let logging: ReturnType<typeof createEngineLogger>;
  let notPrivate: string[];
  try {
    notPrivate = makePrivate(dataDir, [lock.path]);
    db = openDb(dataDir);
  } catch (error) {
    // A refused data dir is left as it was, free for the engine the operator starts next.
    lock.release();
    throw error;
  }
  try {
    logging = createEngineLogger(dataDir, options.logLevel ?? 'info', options.log);
  } catch (error) {
    db.close();
    lock.release();
    throw error;
  }
  const settings = new SettingsRepository(db);
  const taskRows = new TaskRepository(db);
  const accountRows = new AccountsRepository(db);
  // A first start's password given for automation is held to the policy before anything runs.
  const givenPassword = options.adminPassword ?? process.env.VC_ADMIN_PASSWORD;
  const weak =
    givenPassword && accountRows.passwordHash(ADMIN_USER) === undefined
      ? passwordProblem(givenPassword, ADMIN_USER)
      : null;
  if (weak) {
    db.close();
    logging.close();
    lock.release();
    throw new Error(`the admin password of a first start (VC_ADMIN_PASSWORD) ${weak}; choose another`);
  }
  const ffmpeg = findFfmpeg();
  const analysisFps = options.analysisFps ?? DEFAULT_ANALYSIS_FPS;
  const maxSourcePixels = options.maxSourcePixels ?? DEFAULT_MAX_SOURCE_PIXELS;
  // Live HLS folders of a previous run are leftovers: no stream survives a restart.
  const liveRoot = new HlsRoot(join(dataDir, 'live'));
  await liveRoot.sweep();
  // So are the uploads a killed engine was receiving.
  const tmpDir = join(dataDir, 'tmp');
  await rm(tmpDir, { recursive: true, force: true });
  const liveLimits = { ...LIVE_DEFAULTS, ...options.live };
  // File sources come from the operator's media folders only (by default <data-dir>/media).
  const dataMediaDir = join(dataDir, DEFAULT_MEDIA_DIR);
  const sources = new MediaFolders(options.mediaDirs?.map((dir) => resolve(dir)) ?? [dataMediaDir]);
  // The data dir's own media folder is made whenever it is one (the desktop names it among others).
  if (sources.dirs.includes(dataMediaDir)) await mkdir(dataMediaDir, { recursive: true });
  const previews = new PreviewStreams({
    ffmpeg,
    root: liveRoot,
    clock,
    maxSourcePixels,
    maxPreviews: liveLimits.maxPreviews,
    sources,
  });
  // Every part logs through the engine's logger; the server, made first, listens only at the end.
  const log = logging.logger;
  const api = createServer(log, options.connections);
  if (notPrivate.length > 0)
    log.warn(
      `${notPrivate.length} entries of the data dir belong to another user and stay readable to others, e.g. ${notPrivate[0]}`,
    );
  // Hardware decoding is found in the background: streams opened before it is known decode in software.
  const hwaccelSetting = options.hwaccel ?? DEFAULT_HWACCEL;
  let decoding: ResolvedHwaccel = {
    setting: hwaccelSetting,
    hwaccel: 'none',
    fallback: hwaccelSetting === 'none' ? null : 'looking for the hardware decode path',
  };
  void resolveHwaccel(hwaccelSetting, ffmpeg).then((resolved) => {
    decoding = resolved;
    if (resolved.fallback) log.warn(`video decoding: ${resolved.fallback}`);
    else if (resolved.hwaccel !== 'none') log.info(`video decoding on ${resolved.hwaccel}`);
  });

  const pool = new InferencePool({
    onFallback: (model, reason) => log.warn({ model, reason }, 'model runs on the CPU instead'),
    ...options.inference,
  });
  const packageUse = new PackageUse(taskRows);
  const packages = new PackageRegistry(
    new PackagesRepository(db),
    clock,
    dataDir,
    (zapkId) => packageUse.uses(zapkId),
    (model, labels, signal) => pool.checkModel(model, labels, signal),
  );

  // Results flow one way: analysis -> held events -> outbox -> delivery and MQTT.
  const bus = new EventBus((error) => log.error({ err: error }, 'an event bus listener failed'));
  const events = new OutboxRepository(db);
  const outbox = new Outbox(events, taskRows, clock, bus, options.delivery);
  const receiver = new DefaultReceiver(settings);
  outbox.defaultReportUrl = () => receiver.url;
  // The analysis' and the task lifecycle's events wait in memory while the data disk is full.
  const held = new HeldEvents(outbox, clock, options.delivery, (error, taskId) =>
    log.error({ err: error }, `a held event of task ${taskId} was not stored`),
  );
  const delivery = new DeliveryWorker(outbox, clock, bus, options.delivery);
  const mqtt = new MqttPublisher(
    settings,
    events,
    clock,
    bus,
    (message) => log.warn(message),
    (connected) => {
      const broker = displayUrl(mqtt.view().url);
      if (connected) log.info({ event: 'mqtt.connected', broker }, `mqtt: connected to ${broker}`);
      else log.warn({ event: 'mqtt.disconnected', broker }, `mqtt: lost the connection to ${broker}`);
    },
  );

  const clipFiles = new ClipFiles(join(dataDir, 'clips'));
  const clipBuffers = new ClipBuffers(clipFiles.bufferRoot, CLIP_BUFFER_LIMITS, (taskId) =>
    video.reopenSource(taskId),
  );
  const video = new VideoAnalysis({
    clipBuffers,
    sources,
    packages,
    sink: held,
    createDetector: (app) => createDetector(app.model, pool),
    inferenceIdle: () => pool.idle,
    overload: () => lagOverload(engineLoopLag()) ?? pool.starved,
    // Frames of real sources are stamped with real time (rules time loitering by it), not the
    // injected clock, which tests move by hours while the video plays.
    now: () => Date.now(),
    live: {
      ffmpeg,
      root: liveRoot,
      clock,
      ...aiVideoSlots(liveLimits),
      maxPerTask: liveLimits.maxAiVideosPerTask,
      pushTimeoutMs: liveLimits.pushTimeoutMs,
      onPushEnded: (server, reason) => log.warn(`the AI video's push to ${server} ${reason}`),
    },
    openStream: (source, task, { record = true } = {}) =>
      new StreamWatchdog(source, {
        clock,
        reconnectPolicy: () => reconnectPolicyOf(task().persistent),
        decoder: new DecodePath(decoding),
        createSource: (url, transport, mode) => {
          const { task_id } = task();
          const source = new FrameSource(url, {
            transport,
            hwaccel: mode.hwaccel,
            ffmpeg,
            outputFps: mode.fullRate ? undefined : task().analysis_fps,
            seekS: mode.seekS,
            maxPixels: maxSourcePixels,
            maxSide: options.analysisSize,
            readRate: options.fileReadRate,
            record: record ? clipBuffers.target(task_id) : undefined,
          });
          if (record) clipBuffers.follow(task_id, source.run, source);
          return source;
        },
      }),
    openRecorder: (source, task) =>
      new MainRecorder(source, {
        ffmpeg,
        maxPixels: maxSourcePixels,
        readRate: options.fileReadRate,
        clock,
        reconnectPolicy: () => reconnectPolicyOf(task().persistent),
        record: () => clipBuffers.target(task().task_id),
        follow: (run, recorder) => clipBuffers.follow(task().task_id, run, recorder),
      }),
  });
  const tasks = new TaskRegistry(
    taskRows,
    settings,
    packageUse,
    clock,
    packages,
    video,
    analysisFps,
    (taskId) => outbox.refused.of(taskId),
  );
  let cluster: ClusterNode | undefined;
  // In cluster mode users, tokens, the stream-token key and the MQTT settings are the site's.
  let siteAccounts: SiteAccounts | undefined;
  let streamKey: Buffer | undefined;
  if (options.cluster) {
    try {
      cluster = await ClusterNode.join(options.cluster, {
        tasks,
        mqtt,
        held,
        packages,
        settings,
        tmpDir,
        outbox,
        delivery,
        bus,
        log,
        version: packageJson.version,
        login: { ...DEFAULT_LOGIN_LIMITS, ...options.login },
        gpu: () => gpuInUse(pool.models()),
        probeSource: async (videoUrl) => {
          const parsed = parseSourceUrl(videoUrl);
          if ('error' in parsed) throw new Error(parsed.error);
          await probeFirstFrame(ffmpeg, await sources.resolve(parsed), {
            timeoutMs: TASK_LIMITS.pullTimeoutMs,
            maxPixels: maxSourcePixels,
          });
        },
      });
      // A node says it has a GPU once a model's session opened on one: one opens now (gpu-use.ts).
      if ((options.inference?.provider ?? POOL_DEFAULTS.provider) !== 'cpu')
        probeGpu(pool, packages).then(
          (gpu) => log.info(`cluster: this node's models run on ${gpu ? 'a GPU' : 'the CPU'}`),
          (error) => log.warn({ err: error }, 'cluster: the GPU probe failed; the first camera tells'),
        );
      siteAccounts = new SiteAccounts(cluster.site.accounts, accountRows, log);
      // A user both had keeps the site's password: this workstation's initial admin password is void.
      if ((await siteAccounts.start()).includes(ADMIN_USER)) removeInitialPassword(dataDir);
      streamKey = await siteAccounts.streamKey();
      // A joining workstation's MQTT settings become the site's unless the site has some.
      const ownMqtt = loadMqttSettings(settings);
      if (ownMqtt.url !== '') await siteAccounts.offerSetting('mqtt', ownMqtt);
    } catch (error) {
      await siteAccounts?.close();
      await cluster?.close();
      await pool.close();
      db.close();
      logging.close();
      lock.release();
      throw error;
    }
  }
  const accounts = new Accounts(siteAccounts ?? accountRows, clock, {
    login: options.login,
    sharedLogins: cluster?.logins,
    onPasswordChange: (username) => {
      if (username === ADMIN_USER) removeInitialPassword(dataDir);
    },
    hasInitialPassword: (username) => username === ADMIN_USER && hasInitialPassword(dataDir),
  });
  const images = new ImageAnalysis({
    tasks,
    packages,
    outbox,
    clock,
    createDetector: (model) => createDetector(model, pool),
    changeMap: (model, pair, width, height) => pool.changeMap(model, pair, width, height),
    secretOf: (taskId) => taskRows.secretOf(taskId),
  });
  wireTaskEvents(tasks, held, clock, {
    secretOf: (taskId) => taskRows.secretOf(taskId),
    onError: (error, taskId) => log.error({ err: error }, `the event of task ${taskId} was not stored`),
  });
  const optimizations = new Optimizations({
    repository: new OptimizationRepository(db),
    clock,
    dataDir,
    tasks,
    packages,
    video,
    onError: (error) =>
      log.error({ err: error }, 'effect optimization: a sample or statistics were not stored'),
  });

  const stopOperationsLog = logOperations(
    log,
    clock,
    { tasks, video, bus },
    { throttle: { windowMs: options.log?.repeatWindowMs } },
  );
  const snapshots = new FrameSnapshots(video);
  tasks.on('closed', (view) => snapshots.release(view.task_id));

  const streamTokens = new StreamTokens(clock, undefined, streamKey);
  const clips = new AlarmClips({
    files: clipFiles,
    repository: new ClipsRepository(db),
    settings,
    buffers: clipBuffers,
    ffmpeg,
    clock,
    runsVideo: (taskId) => video.runs(taskId),
    watchAnalysis: (taskId, onFrame) => video.watch(taskId, (frame) => onFrame(frame.timestampMs)),
    linkToken: (clipId) => streamTokens.issue(linkScopeKey(clipLinkScope(clipId))),
    onError: (error, what) => log.warn({ err: error }, what),
  });
  outbox.clips = clips;

  const startedAt = clock.now();
  const alarmRows = new ReviewRepository(db);
  const system = new SystemMonitor({
    dataDir,
    mediaDirs: sources.dirs,
    ffmpeg,
    natsServer: findNatsServer(),
    version: packageJson.version,
    startedAt,
    now: () => clock.now(),
    inference: pool,
    outbox,
    tasks,
    decoding: () => decoding,
    clips,
  });
  await buildApi(api, {
    accounts,
    audit: new AuditTrail(new AuditRepository(db), clock, log, options.audit),
    streamTokens,
    packages,
    packageStore: cluster?.packages ?? packages,
    tasks,
    images,
    optimizations,
    video,
    snapshots,
    alarms: new AlarmReview(alarmRows, clock, clips),
    review: new ReviewItems(
      new ReviewItemsRepository(db),
      alarmRows,
      tasks,
      clock,
      cluster !== undefined,
      clips,
    ),
    clips,
    previews,
    uploadMemory: uploadMemory(options.uploadMemoryBytes),
    events: { outbox, bus, mqtt, held, delivery, receiver },
    clock,
    tmpDir,
    version: packageJson.version,
    startedAt,
    system,
    cluster,
    consoleDir: options.consoleDir,
    allowed: {
      hosts: [...(options.allowedHosts ?? []), ...advertisedHosts(options.cluster?.advertiseUrl)],
      origins: options.allowedOrigins ?? [],
    },
  });

  if (!accounts.hasUser(ADMIN_USER)) {
    const password = givenPassword || randomPassword();
    // The operator's way in when no password was given: a file only they can read, never a log that
    // persists. Written before the account exists, so a crash in between cannot lose the password.
    const file = givenPassword ? undefined : writeInitialPassword(dataDir, password);
    if (!(await accounts.createUser(ADMIN_USER, password))) {
      // Cluster mode: another node made the site's admin first; its password is the site's, not this one.
      if (file) removeInitialPassword(dataDir);
      api.log.warn(`user "${ADMIN_USER}" was made by another node of the site meanwhile: use its password`);
    } else if (file) {
      api.log.warn(
        `created user "${ADMIN_USER}"; its password is in ${file} (deleted once you change the password)`,
      );
      if (process.stdout.isTTY) process.stdout.write(`admin password (shown once): ${password}\n`);
    }
  }
  // Housekeeping: on a full disk it waits for the next start (a cluster node's SiteAccounts purges the site's).
  if (!siteAccounts) writeUnlessFull(() => accountRows.deleteExpiredTokens(clock.now()));
  await packages.sweepOrphans();
  packages.builtinDir = options.builtinDir ?? BUILTIN_PACKAGE_DIR;
  if (settings.get(BUILTIN_INSTALLED) === undefined) {
    await packages.installDir(packages.builtinDir, true);
    settings.set(BUILTIN_INSTALLED, clock.now());
  }
  // Packages the operator wants present (--install): installed once, upgraded when the file's
  // version differs; before any task resumes, so none can have its model replaced.
  for (const file of options.installPackages ?? []) {
    try {
      const result = await packages.ensureZapk(file);
      if (result.installed)
        api.log.info(`installed package ${result.zapk_id} ${result.version} from ${file}`);
    } catch (error) {
      api.log.warn(`package ${file} was not installed: ${(error as Error).message}`);
    }
  }
  optimizations.open();
  // A cluster node resumes only the tasks still assigned to it; the others run elsewhere now.
  tasks.resumeAll(cluster?.leases());
  delivery.start();
  mqtt.start();
  if (siteAccounts) {
    const site = siteAccounts;
    // A PUT on any node applies on every node (each keeps its own client id).
    mqtt.share = (next) => site.putSetting('mqtt', next);
    site.onSetting('mqtt', (value) =>
      mqtt
        .adopt(value as MqttSettings)
        .catch((error: unknown) => log.warn({ err: error }, "mqtt: the site's settings were not applied")),
    );
  }
  const stopRetention = startRetention(outbox, clock);

  await api.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 8080 });
  const address = api.server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 8080);
  const host = options.host ?? '127.0.0.1';
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;

  if (cluster && siteAccounts) {
    const site = siteAccounts;
    // Out of the site, nothing follows it any more: the accounts and settings are this node's own.
    cluster.onLeft = () => void site.leave();
  }
  cluster?.start(options.cluster?.advertiseUrl ?? `http://${urlHost}:${port}`, api);

  let closed = false;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    issueToken(username = ADMIN_USER) {
      const { token, expiresIn, stored } = accounts.issueToken(username);
      // Valid here at once; in cluster mode on the other nodes once the site has it.
      stored.catch((error: unknown) => log.warn({ err: error }, 'a token was not stored for the site'));
      return { access_token: token, token_type: 'Bearer', expires_in: expiresIn };
    },
    resetPassword(username, password) {
      return accounts.setPassword(username, password);
    },
    outbox,
    bus,
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([tasks.shutdown(), previews.closeAll()]);
      clipBuffers.close();
      await clips.close();
      await siteAccounts?.close();
      await cluster?.close();
      await optimizations.close();
      await pool.close();
      // Attempts in flight are dropped unrecorded: they go out again after the next start.
      delivery.stop();
      const lost = held.close();
      if (lost > 0) log.warn(`${lost} events held in memory for want of disk space were lost`);
      stopRetention();
      await mqtt.close();
      await api.close();
      stopOperationsLog();
      db.close();
      logging.close();
      lock.release();
    },
  };
}
