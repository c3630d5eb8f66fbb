import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { clientKey } from './client-address';
import type { ConnectionLimits } from './connections';

/**
 * open: a client without a token (yet), within the share of slots anyone may take.
 * probation: one admitted into the reserved slots; its first request must carry a valid token.
 * trusted: one that has presented a valid token.
 */
type Kind = 'open' | 'probation' | 'trusted';

interface Slot {
  socket: Socket;
  client: string;
  kind: Kind;
  /** A request in flight, or an upgraded socket (a WebSocket), which never idles again. */
  busy: boolean;
}

/**
 * Who keeps a connection when they are all taken. A newcomer is never turned away while a connection
 * merely idles: the one idle the longest is closed for it, anonymous ones first. Connections without
 * a token may hold `maxConnections - reserved` slots, `perClient` of them from one client address;
 * beyond, a newcomer takes a reserved slot on probation: its first request must carry a valid token
 * (the console's do), or it is answered 503 CONNECTIONS_BUSY and closed. So neither keep-alive
 * requests nor slow anonymous requests, from any number of loopback addresses, shut the console out.
 */
export class ConnectionSlots {
  private readonly slots = new Map<Socket, Slot>();
  // Idle connections of each kind, the one idle the longest first (a Map keeps insertion order).
  private readonly idle: Record<Kind, Map<Socket, Slot>> = {
    open: new Map(),
    probation: new Map(),
    trusted: new Map(),
  };
  private openCount = 0;
  private readonly openOf = new Map<string, number>();
  private readonly openCap: number;

  constructor(private readonly limits: Pick<ConnectionLimits, 'maxConnections' | 'perClient' | 'reserved'>) {
    this.openCap = limits.maxConnections - limits.reserved;
    if (this.openCap < 1 || limits.perClient < 1)
      throw new RangeError('connections: reserved must be below maxConnections, perClient at least 1');
  }

  /** Takes over admission on the server: Node's own limit only backs it up. */
  attach(server: Server): void {
    // One above: a newcomer is counted before it is seen, then it or an idle connection goes at once.
    server.maxConnections = this.limits.maxConnections + 1;
    server.on('connection', (socket: Socket) => this.admit(socket));
    server.on('request', (request, response) => {
      this.setBusy(request.socket, true);
      response.once('close', () => this.setBusy(request.socket, false));
    });
    server.on('upgrade', (request) => this.setBusy(request.socket, true));
  }

  /** The connection presented a valid token. */
  trust(socket: Socket): void {
    const slot = this.slots.get(socket);
    if (slot && slot.kind !== 'trusted') this.move(slot, 'trusted');
  }

  /** Whether the connection sits in a reserved slot without having shown a token. */
  onProbation(socket: Socket): boolean {
    return this.slots.get(socket)?.kind === 'probation';
  }

  private admit(socket: Socket): void {
    const client = clientKey(socket.remoteAddress ?? '');
    const kind = this.placeFor(client);
    if (!kind) {
      socket.destroy();
      return;
    }
    const slot: Slot = { socket, client, kind, busy: false };
    this.slots.set(socket, slot);
    this.count(slot, 1);
    this.idle[kind].set(socket, slot);
    socket.once('close', () => this.remove(slot));
  }

  /** Where a newcomer goes, after closing connections to make room; null when none may go. */
  private placeFor(client: string): Kind | null {
    const { maxConnections, perClient } = this.limits;
    const ofClient = () => this.openOf.get(client) ?? 0;
    if (ofClient() >= perClient) this.closeFirst(this.idleOf('open', (slot) => slot.client === client));
    if (this.openCount >= this.openCap) this.closeFirst(this.idleOf('open'));
    const kind = ofClient() < perClient && this.openCount < this.openCap ? 'open' : 'probation';
    if (this.slots.size < maxConnections) return kind;
    // All taken: an idle one goes, anonymous first; then one on probation even in a request, which
    // has shown no token (it would be trusted) and is answered 503 at best.
    const closed =
      this.closeFirst(this.idleOf('open')) ||
      this.closeFirst(this.idleOf('probation')) ||
      this.closeFirst(this.ofKind('probation')) ||
      this.closeFirst(this.idleOf('trusted'));
    return closed ? kind : null;
  }

  /** Idle connections of a kind that `which` accepts, the one idle the longest first. */
  private *idleOf(kind: Kind, which: (slot: Slot) => boolean = () => true): Iterable<Slot> {
    for (const slot of this.idle[kind].values()) if (which(slot)) yield slot;
  }

  /** Connections of a kind, the oldest first. */
  private *ofKind(kind: Kind): Iterable<Slot> {
    for (const slot of this.slots.values()) if (slot.kind === kind) yield slot;
  }

  /** Closes the first of these connections; false when there is none. */
  private closeFirst(slots: Iterable<Slot>): boolean {
    for (const slot of slots) {
      this.remove(slot);
      slot.socket.destroy();
      return true;
    }
    return false;
  }

  private setBusy(socket: Socket, busy: boolean): void {
    const slot = this.slots.get(socket);
    if (!slot) return;
    slot.busy = busy;
    this.idle[slot.kind].delete(socket);
    if (busy) return;
    // A reserved slot is lent for requests with a token only.
    if (slot.kind === 'probation') socket.end();
    else this.idle[slot.kind].set(socket, slot);
  }

  private move(slot: Slot, kind: Kind): void {
    this.count(slot, -1);
    const wasIdle = this.idle[slot.kind].delete(slot.socket);
    slot.kind = kind;
    this.count(slot, 1);
    if (wasIdle) this.idle[kind].set(slot.socket, slot);
  }

  private remove(slot: Slot): void {
    if (this.slots.get(slot.socket) !== slot) return;
    this.slots.delete(slot.socket);
    this.idle[slot.kind].delete(slot.socket);
    this.count(slot, -1);
  }

  private count(slot: Slot, by: 1 | -1): void {
    if (slot.kind !== 'open') return;
    this.openCount += by;
    const n = (this.openOf.get(slot.client) ?? 0) + by;
    if (n > 0) this.openOf.set(slot.client, n);
    else this.openOf.delete(slot.client);
  }
}
