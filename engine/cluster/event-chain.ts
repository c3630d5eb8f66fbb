import { JetStreamApiError } from '@nats-io/jetstream';
import { TimeoutError } from '@nats-io/transport-node';
import { type Static, Type } from '@sinclair/typebox';
import { CallbackBody } from '../events/schema';
import { compileCheck } from '../schema/ajv';
import type { ClusterConnection } from './connection';
import { EVENTS_STREAM, eventSubject } from './site-store';

/**
 * One entry of a task's event chain. An owner entry opens each owner's part: it records who took
 * the task at which epoch, and the last event seq before it, so the chain's tail always tells the
 * next seq. Every entry carries the epoch of the owner that appended it, so the tail alone tells
 * whether a later owner has claimed the chain. `body` is the callback body exactly as delivered (its event_id and seq included).
 */
export const ChainEntry = Type.Union([
  Type.Object({
    kind: Type.Literal('owner'),
    node: Type.String(),
    epoch: Type.Integer({ minimum: 1 }),
    seq: Type.Integer({ minimum: 0 }),
  }),
  Type.Object({
    kind: Type.Literal('event'),
    epoch: Type.Integer({ minimum: 1 }),
    seq: Type.Integer({ minimum: 1 }),
    event_id: Type.String(),
    late: Type.Boolean(),
    body: CallbackBody,
  }),
]);
export type ChainEntry = Static<typeof ChainEntry>;

const checkEntry = compileCheck<ChainEntry>(ChainEntry, 'chain entry');

/**
 * An entry as read from the stream, checked: another node wrote it, and what a node delivers, lists
 * or takes over must be an event body the contract allows whoever appended it. Null for anything else.
 */
export function entryOf(json: unknown): ChainEntry | null {
  const checked = checkEntry(json);
  return checked.ok ? checked.value : null;
}

/** JetStream's answer to an append whose expected last subject sequence is no longer the last. */
const WRONG_LAST_SEQUENCE = 10071;

/** The owner's appends were refused: another node took the task at a later epoch. */
export class Superseded extends Error {
  constructor(
    readonly taskId: string,
    readonly by: { node: string | null; epoch: number },
  ) {
    super(`task ${taskId} was taken over by ${by.node} (epoch ${by.epoch})`);
  }
}

/** The last entry of a task's chain and its stream sequence (0 for an empty chain). */
export async function chainTail(
  conn: ClusterConnection,
  taskId: string,
): Promise<{ streamSeq: number; entry: ChainEntry | null }> {
  const message = await conn.jsm.streams.getMessage(EVENTS_STREAM, { last_by_subj: eventSubject(taskId) });
  if (!message) return { streamSeq: 0, entry: null };
  return { streamSeq: message.seq, entry: entryOf(message.json()) };
}

/**
 * The chain's entries after a stream sequence, oldest first, at most `limit`: each read from the
 * stream's leader (STREAM.MSG.GET with next_by_subj), so nothing acknowledged is missing, which a
 * replica's direct get cannot promise. A chain is read whole only when a node takes a task over.
 */
export async function readChain(
  conn: ClusterConnection,
  taskId: string,
  afterStreamSeq: number,
  limit: number,
): Promise<Array<{ streamSeq: number; entry: ChainEntry }>> {
  const messages = await readSubject(conn, EVENTS_STREAM, eventSubject(taskId), afterStreamSeq, limit);
  return messages.flatMap(({ streamSeq, json }) => {
    const entry = entryOf(json);
    return entry ? [{ streamSeq, entry }] : [];
  });
}

/** A stream's messages on one subject after a stream sequence, oldest first, read from its leader. */
export async function readSubject(
  conn: ClusterConnection,
  stream: string,
  subject: string,
  afterStreamSeq: number,
  limit: number,
): Promise<Array<{ streamSeq: number; json: unknown }>> {
  const messages: Array<{ streamSeq: number; json: unknown }> = [];
  let next = afterStreamSeq + 1;
  while (messages.length < limit) {
    // The leader's API takes next_by_subj too; the client's type names only seq and last_by_subj.
    const query = { seq: next, next_by_subj: subject };
    const message = await conn.jsm.streams.getMessage(stream, query);
    if (!message) break;
    messages.push({ streamSeq: message.seq, json: message.json() });
    next = message.seq + 1;
  }
  return messages;
}

/**
 * The appends of one task's owner, fenced: each names the stream sequence of the chain's last entry
 * as this owner knows it, so once another node has claimed the task (its owner entry appended), every
 * append of this one is refused and it learns it was superseded. The analysis is never fenced, only
 * its output: a node that cannot reach NATS keeps analysing and appends when it can.
 */
export class TaskChain {
  private tail = 0;
  private lastSeq = 0;
  /** Where this owner's recent events lie in the stream, by seq: delivery marks name both. */
  private readonly placed = new Map<number, number>();

  constructor(
    private readonly conn: ClusterConnection,
    readonly taskId: string,
    readonly node: string,
    readonly epoch: number,
  ) {}

  /** The seq of the last event in the chain as this owner knows it. */
  get seq(): number {
    return this.lastSeq;
  }

  /**
   * The stream sequence of an event this owner appended, forgetting those before it (delivery goes
   * in seq order); undefined when it was not appended by this owner.
   */
  streamSeqOf(seq: number): number | undefined {
    const found = this.placed.get(seq);
    for (const placedSeq of this.placed.keys()) if (placedSeq < seq) this.placed.delete(placedSeq);
    return found;
  }

  /**
   * Takes the chain: appends this owner's entry after whatever is last, and returns the last event
   * seq before it. Throws Superseded when the chain already names a later epoch.
   */
  async claim(): Promise<number> {
    for (;;) {
      const { streamSeq, entry } = await chainTail(this.conn, this.taskId);
      if (entry && entry.epoch > this.epoch) throw new Superseded(this.taskId, ownerOf(entry));
      if (entry?.kind === 'owner' && entry.epoch === this.epoch && entry.node === this.node) {
        this.tail = streamSeq;
        this.lastSeq = entry.seq;
        return this.lastSeq;
      }
      const seq = entry?.seq ?? 0;
      const owner: ChainEntry = { kind: 'owner', node: this.node, epoch: this.epoch, seq };
      // The id names the tail it follows: a retry after a refusal is a new message, a retry after a
      // lost answer the same one (stored once).
      const stored = await this.tryAppend(
        owner,
        streamSeq,
        `${this.taskId}:owner:${this.epoch}:${streamSeq}`,
      );
      if (stored !== null) {
        this.tail = stored;
        this.lastSeq = seq;
        return seq;
      }
    }
  }

  /**
   * Appends one event (its seq must follow the chain's last). Throws Superseded when a later owner
   * has claimed the chain; appends nothing in that case.
   */
  async append(event: Omit<Extract<ChainEntry, { kind: 'event' }>, 'kind' | 'epoch'>): Promise<void> {
    const entry: ChainEntry = { kind: 'event', epoch: this.epoch, ...event };
    // Task, epoch and seq: a refused append of a superseded owner never shadows the new owner's event
    // of the same seq in the duplicate window.
    const stored = await this.tryAppend(entry, this.tail, `${this.taskId}:${this.epoch}:${entry.seq}`);
    if (stored !== null) {
      this.tail = stored;
      this.lastSeq = entry.seq;
      this.placed.set(entry.seq, stored);
      return;
    }
    const { streamSeq, entry: last } = await chainTail(this.conn, this.taskId);
    // Our own append landed and only its answer was lost: go on from it.
    if (last?.kind === 'event' && last.event_id === entry.event_id) {
      this.tail = streamSeq;
      this.lastSeq = entry.seq;
      return;
    }
    throw new Superseded(this.taskId, last ? ownerOf(last) : { node: null, epoch: this.epoch });
  }

  /** The stream sequence the entry got, or null when the expected last sequence was not the last. */
  private async tryAppend(entry: ChainEntry, expectLast: number, msgID: string): Promise<number | null> {
    try {
      const ack = await this.conn.js.publish(eventSubject(this.taskId), JSON.stringify(entry), {
        msgID,
        expect: { lastSubjectSequence: expectLast },
      });
      this.conn.answered();
      return ack.seq;
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === WRONG_LAST_SEQUENCE) {
        this.conn.answered();
        return null;
      }
      if (error instanceof TimeoutError) this.conn.timedOut();
      throw error;
    }
  }
}

/** Who appended an entry: an owner entry names its node; an event only its owner's epoch. */
function ownerOf(entry: ChainEntry): { node: string | null; epoch: number } {
  return { node: entry.kind === 'owner' ? entry.node : null, epoch: entry.epoch };
}
