import { connect, type MqttClient } from 'mqtt';
import type { Clock, TimerHandle } from '../clock';
import type { EventBus } from '../events/bus';
import { SpaceWaiter } from '../store/disk-full';
import type { SettingsRepository } from '../store/settings-repository';
import { MAX_MQTT_TESTS, type MqttTestResult, probeMqtt } from './mqtt-probe';
import {
  DEFAULT_TOPIC,
  loadMqttSettings,
  type MqttSettings,
  type MqttSettingsBody,
  type MqttSettingsView,
  type MqttStatus,
  mergeMqttSettings,
  newClientId,
  saveMqttSettings,
  settingsToTest,
  topicOf,
  viewOf,
} from './mqtt-settings';
import type { EventSummary, OutboxRepository } from './outbox-repository';

const CURSOR_KEY = 'mqtt_cursor';
/** Messages handed to the client and not yet acknowledged; the rest wait in the outbox, not in memory. */
const WINDOW = 64;
const RETRY_MS = 5000;
const CURSOR_SAVE_MS = 1000;

/** An event handed to the client (or skipped), until the cursor passes it. */
interface WindowItem {
  id: number;
  task_id: string;
  seq: number;
  /** Published (not skipped). */
  sent: boolean;
  acked: boolean;
}

/**
 * Publishes every stored event QoS 1 on vision/<task_id>/<app_id> (or the topic template set) while a broker is configured.
 * The outbox is the queue: a cursor (saved in settings) marks the events the broker acknowledged,
 * so events stored while the broker or the engine was down go out when both are back. mqtt.js
 * reconnects on its own and resends what was in flight; duplicates are possible, losses are not.
 * Enabling MQTT starts at the next event: history stored while it was off is not published.
 */
export class MqttPublisher {
  private settings: MqttSettings;
  private client?: MqttClient;
  private connected = false;
  private lastError: string | null = null;
  /** Every event with id <= cursor has been acknowledged by the broker. */
  private cursor = 0;
  private nextId = 1;
  private window: WindowItem[] = [];
  private saveTimer?: TimerHandle;
  private readonly retryTimers = new Set<TimerHandle>();
  private configuring: Promise<unknown> = Promise.resolve();
  /** Connection tests under way. */
  private tests = 0;
  /**
   * Whether a stored event goes out now (send), after its task's chain holds it (wait: fill() is
   * called again), or never from this engine (skip: a cluster node that lost the task, whose new
   * owner publishes it). A single workstation sends everything.
   */
  gate: (taskId: string, seq: number) => 'send' | 'wait' | 'skip' = () => 'send';
  /**
   * Cluster mode: hands settings a PUT validated to the site before they apply here (a refusal
   * changes nothing); every node then adopts them. A single workstation keeps them to itself.
   */
  share: (settings: MqttSettings) => Promise<void> = async () => {};
  /**
   * Cluster mode: the broker acknowledged a task's events up to this seq (those before it in the
   * outbox too), so the node records how far MQTT got for a new owner to resume from.
   */
  published: (taskId: string, seq: number) => void = () => {};
  /** The cursor, when a full disk held its saving back (the broker may then get events again after a crash). */
  private readonly writes: SpaceWaiter;

  constructor(
    private readonly stored: SettingsRepository,
    private readonly events: OutboxRepository,
    private readonly clock: Clock,
    private readonly bus: EventBus,
    private readonly onError: (message: string) => void = () => {},
    /** The broker connection came up or went down (not when the engine ends it). */
    private readonly onConnection: (connected: boolean) => void = () => {},
  ) {
    this.settings = loadMqttSettings(stored);
    this.writes = new SpaceWaiter(clock, (error) => onError(`mqtt: the cursor was not saved: ${error}`));
  }

  private readonly onEvent = () => this.fill();

  start(): void {
    this.bus.on('event', this.onEvent);
    if (this.settings.enabled) this.open();
  }

  /** Whether events are published (a broker is configured and enabled). */
  get enabled(): boolean {
    return this.settings.enabled;
  }

  view(): MqttSettingsView {
    return viewOf(this.settings, this.status());
  }

  status(): MqttStatus {
    const backlog = this.settings.enabled ? this.events.countAfter(this.cursor) : 0;
    return { connected: this.connected, last_error: this.lastError, backlog };
  }

  /**
   * Connects once with the stored settings and the body applied, saving nothing, and says how it went
   * (the console's "test connection"): the stored password serves a body that names the same broker.
   */
  async test(body: MqttSettingsBody): Promise<MqttTestResult> {
    const settings = settingsToTest(this.settings, body);
    if (this.tests >= MAX_MQTT_TESTS)
      return { ok: false, outcome: 'busy', detail: 'another connection test is running', elapsed_ms: 0 };
    this.tests += 1;
    try {
      return await probeMqtt(settings);
    } finally {
      this.tests -= 1;
    }
  }

  /** Validates and saves new settings, then reconnects with them. A refused body changes nothing. */
  configure(body: MqttSettingsBody): Promise<MqttSettingsView> {
    // One change at a time: each merges onto the settings the previous one saved.
    const done = this.configuring.then(() => this.apply(body));
    this.configuring = done.catch(() => {});
    return done;
  }

  /**
   * Applies the site's settings (cluster mode: a PUT on another node), keeping this node's own client
   * id: a broker keeps one connection per client id, so two nodes with one id would throw each other
   * off in turn. Nothing happens when they are the settings this node already has.
   */
  adopt(site: MqttSettings): Promise<void> {
    const done = this.configuring.then(async () => {
      // Settings a node of an earlier version shared have no topic: the contract's.
      const next = {
        ...site,
        topic: site.topic ?? DEFAULT_TOPIC,
        client_id: this.settings.client_id || newClientId(),
      };
      if (JSON.stringify(next) !== JSON.stringify(this.settings)) await this.save(next);
    });
    this.configuring = done.catch(() => {});
    return done;
  }

  private async apply(body: MqttSettingsBody): Promise<MqttSettingsView> {
    const next = mergeMqttSettings(this.settings, body);
    await this.share(next);
    await this.save(next);
    return this.view();
  }

  /** Saves the settings and reconnects with them; refused (a full disk), publishing goes on as it was. */
  private async save(next: MqttSettings): Promise<void> {
    const wasEnabled = this.settings.enabled;
    await this.shut();
    // The cursor is decided here; a save still waiting for space would undo that.
    this.writes.forget(CURSOR_KEY);
    try {
      this.stored.transaction(() => {
        saveMqttSettings(this.stored, next);
        if (!next.enabled) this.stored.remove(CURSOR_KEY);
        else if (!wasEnabled) this.saveCursor(this.events.maxId());
      });
    } catch (error) {
      // Refused (a full disk): publishing goes on with the settings it had.
      if (wasEnabled) this.open();
      throw error;
    }
    this.settings = next;
    if (next.enabled) this.open();
  }

  async close(): Promise<void> {
    this.bus.off('event', this.onEvent);
    await this.shut();
    this.writes.close();
  }

  private open(): void {
    const saved = this.stored.get<number>(CURSOR_KEY);
    this.cursor = saved === undefined ? this.events.maxId() : Number(saved);
    if (saved === undefined) this.keepCursor();
    this.nextId = this.cursor + 1;
    this.window = [];
    const { url, client_id, username, password, tls } = this.settings;
    const client = connect(url, {
      clientId: client_id,
      username: username || undefined,
      password: password || undefined,
      clean: true,
      reconnectPeriod: 1000,
      connectTimeout: 10_000,
      keepalive: 30,
      rejectUnauthorized: tls.reject_unauthorized,
      ca: tls.ca || undefined,
    });
    client.on('connect', () => {
      if (!this.connected) this.onConnection(true);
      this.connected = true;
      this.lastError = null;
      this.fill();
    });
    client.on('close', () => {
      if (client !== this.client) return;
      if (this.connected) this.onConnection(false);
      this.connected = false;
    });
    client.on('error', (error) => {
      if (error.message !== this.lastError) this.onError(`mqtt: ${error.message}`);
      this.lastError = error.message;
    });
    this.client = client;
    this.fill();
  }

  /**
   * Hands the client the next stored events, up to the window (and the gate), while it is connected:
   * an event is judged by the gate when it goes to the broker, not queued in the client beforehand (a
   * cluster node frozen meanwhile must not send on waking what its task's new owner publishes).
   */
  fill(): void {
    const client = this.client;
    if (!client || !this.connected || this.window.length >= WINDOW) return;
    for (const row of this.events.fromId(this.nextId, WINDOW - this.window.length)) {
      const verdict = this.gate(row.task_id, row.seq);
      if (verdict === 'wait') break;
      // A skipped event counts as acknowledged: the cursor passes it.
      const item = {
        id: row.id,
        task_id: row.task_id,
        seq: row.seq,
        sent: verdict === 'send',
        acked: verdict === 'skip',
      };
      this.window.push(item);
      this.nextId = row.id + 1;
      if (verdict === 'send') this.publish(client, row, item);
    }
    this.advance();
  }

  /** Moves the cursor past the acknowledged events at the head of the window. */
  private advance(): void {
    let advanced = false;
    while (this.window[0]?.acked) {
      const item = this.window.shift() as WindowItem;
      this.cursor = item.id;
      if (item.sent) this.published(item.task_id, item.seq);
      advanced = true;
    }
    if (advanced) this.scheduleCursorSave();
  }

  private publish(client: MqttClient, row: EventSummary, item: WindowItem): void {
    client.publish(topicOf(this.settings.topic, row.task_id, row.app_id), row.body, { qos: 1 }, (error) => {
      if (client !== this.client) return;
      if (error) {
        // Refused before reaching the broker (e.g. too large for it): try again later, in place.
        this.lastError = error.message;
        const timer = this.clock.setTimeout(() => {
          this.retryTimers.delete(timer);
          if (client === this.client) this.publish(client, row, item);
        }, RETRY_MS);
        this.retryTimers.add(timer);
        return;
      }
      item.acked = true;
      this.fill();
    });
  }

  private scheduleCursorSave(): void {
    if (this.saveTimer) return;
    // Saved at most once a second: after a crash the last second's events go out again (QoS 1 allows it).
    this.saveTimer = this.clock.setTimeout(() => {
      this.saveTimer = undefined;
      this.keepCursor();
    }, CURSOR_SAVE_MS);
  }

  /** Saves the cursor now or, on a full disk, its latest value once there is room. */
  private keepCursor(): void {
    this.writes.write(CURSOR_KEY, () => this.saveCursor(this.cursor));
  }

  private saveCursor(cursor: number): void {
    this.stored.set(CURSOR_KEY, cursor);
  }

  /** Ends the client without waiting for the broker; what was in flight goes out again from the cursor. */
  private async shut(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.connected = false;
    for (const timer of this.retryTimers) this.clock.clearTimeout(timer);
    this.retryTimers.clear();
    if (this.saveTimer) this.clock.clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    if (!client) return;
    this.keepCursor();
    await new Promise<void>((done) => client.end(true, {}, () => done()));
  }
}
