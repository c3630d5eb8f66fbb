/**
 * The messages between the engine process (engine/cli.ts) and the desktop main process that starts
 * and supervises it (main/engine-supervisor.ts), and the supervision state main shows the console.
 * One schema per direction; each side checks what it receives. Plain TypeBox: no Node, no Electron.
 */
import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

/**
 * The environment variable naming a NATS server binary, set by main for the engine process when the
 * desktop build ships one (main/nats-server.ts) and by operators and tests to one of their own.
 */
export const NATS_SERVER_ENV = 'VC_NATS_SERVER';

/** A token for the local admin, as POST /api/auth/token answers it: how main signs the console in. */
export const IssuedTokenSchema = Type.Object({
  access_token: Type.String({ minLength: 1 }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Number({ minimum: 0 }),
});
export type IssuedToken = Static<typeof IssuedTokenSchema>;

/** What the engine process tells its parent. */
export const EngineMessageSchema = Type.Union([
  /** The API listens: main signs in with tokens it asks for (issue-token). */
  Type.Object({
    type: Type.Literal('ready'),
    url: Type.String({ minLength: 1 }),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
  }),
  /**
   * A stored result event (a callback body) and a change of an event's delivery state: what the
   * SSE feed carries. Their shapes are the engine's API schemas; main relays them unchanged.
   */
  Type.Object({ type: Type.Literal('event'), body: Type.Unknown() }),
  Type.Object({ type: Type.Literal('delivery'), record: Type.Unknown() }),
  /** The answer to an issue-token request of the same id. */
  Type.Object({ type: Type.Literal('token'), id: Type.Integer(), token: IssuedTokenSchema }),
  /**
   * The answer to a reset-password request of the same id, as PUT /api/auth/password would answer:
   * the HTTP status and the envelope (400 when the password policy refuses the password).
   */
  Type.Object({
    type: Type.Literal('password-reset'),
    id: Type.Integer(),
    status: Type.Integer(),
    body: Type.Unknown(),
  }),
  /** The engine cannot start or has to stop; the process exits next. */
  Type.Object({ type: Type.Literal('fatal'), message: Type.String() }),
]);
export type EngineMessage = Static<typeof EngineMessageSchema>;

/** What the parent asks of the engine process. */
export const ParentMessageSchema = Type.Union([
  Type.Object({ type: Type.Literal('issue-token'), id: Type.Integer() }),
  /**
   * Sets the admin's password without the current one: the desktop console's reset, which main
   * (holding no password) asks for only after the operator confirmed it in a native dialog.
   */
  Type.Object({
    type: Type.Literal('reset-password'),
    id: Type.Integer(),
    password: Type.String({ minLength: 1, maxLength: 256 }),
  }),
  /** Stop every task, close the store, exit 0. */
  Type.Object({ type: Type.Literal('stop') }),
]);
export type ParentMessage = Static<typeof ParentMessageSchema>;

/** How the last engine process ended: exit code or signal, and its fatal message when it sent one. */
export const EngineExitSchema = Type.Object({
  code: Type.Union([Type.Integer(), Type.Null()]),
  signal: Type.Union([Type.String(), Type.Null()]),
  reason: Type.Optional(Type.String()),
});
export type EngineExit = Static<typeof EngineExitSchema>;

/** The supervision state the console shows (times are epoch milliseconds). */
export const EngineStateSchema = Type.Union([
  Type.Object({ state: Type.Literal('starting'), attempt: Type.Integer({ minimum: 0 }) }),
  Type.Object({
    state: Type.Literal('running'),
    url: Type.String(),
    pid: Type.Union([Type.Integer(), Type.Null()]),
    since: Type.Number(),
    restarts: Type.Integer({ minimum: 0 }),
  }),
  Type.Object({
    state: Type.Literal('restarting'),
    attempt: Type.Integer({ minimum: 1 }),
    next_try_at: Type.Number(),
    last_exit: EngineExitSchema,
  }),
  Type.Object({
    state: Type.Literal('failed'),
    crashes: Type.Integer({ minimum: 0 }),
    last_exit: EngineExitSchema,
  }),
  Type.Object({ state: Type.Literal('stopped') }),
]);
export type EngineState = Static<typeof EngineStateSchema>;

const engineMessage = TypeCompiler.Compile(EngineMessageSchema);
const parentMessage = TypeCompiler.Compile(ParentMessageSchema);

/** A message from the engine process, or null when it is not one. */
export function parseEngineMessage(value: unknown): EngineMessage | null {
  return engineMessage.Check(value) ? value : null;
}

/** A message from the parent, or null when it is not one. */
export function parseParentMessage(value: unknown): ParentMessage | null {
  return parentMessage.Check(value) ? value : null;
}
