/**
 * The web console's session across the tabs of one browser profile: a new tab (or one at the
 * sign-in screen) asks the open tabs for their session over a BroadcastChannel and takes the answer;
 * a sign-in in one tab signs in the others that have none; a sign-out in one signs out every one.
 * A BroadcastChannel reaches only pages of the same origin in the same profile, in memory: the
 * token goes nowhere that sessionStorage did not already hold it (docs/security.md).
 */
import { type SignOutReason, type StoredSession, sessionEvents, useSession, validSession } from './store';

export const SESSION_CHANNEL = 'vc.session';

type Message =
  | { type: 'ask' }
  | { type: 'session'; session: StoredSession }
  | { type: 'signedOut'; reason: SignOutReason | null };

const REASONS: readonly SignOutReason[] = ['expired', 'passwordChanged', 'followed'];

/** Starts sharing this tab's session; returns the stop. Without BroadcastChannel, tabs stay apart. */
export function shareSession(): () => void {
  if (typeof BroadcastChannel === 'undefined') return () => {};
  const channel = new BroadcastChannel(SESSION_CHANNEL);
  const post = (message: Message) => channel.postMessage(message);
  channel.onmessage = (event: MessageEvent<unknown>) => {
    const message = event.data as Partial<Message> | null;
    const { session } = useSession.getState();
    if (message?.type === 'ask') {
      if (session && session.expiresAt > Date.now()) post({ type: 'session', session });
    } else if (message?.type === 'session') {
      const offered = validSession(message.session);
      if (!session && offered) useSession.getState().adopt(offered);
    } else if (message?.type === 'signedOut') {
      // The tabs share one token: signed out (or refused) in one, it is over in all.
      if (session) {
        const reason = REASONS.find((known) => known === message.reason);
        useSession.getState().endShared(reason);
      }
    }
  };
  sessionEvents.signedIn = (session) => post({ type: 'session', session });
  sessionEvents.signedOut = (reason) => post({ type: 'signedOut', reason: reason ?? null });
  if (!useSession.getState().session) post({ type: 'ask' });
  return () => {
    sessionEvents.signedIn = () => {};
    sessionEvents.signedOut = () => {};
    channel.close();
  };
}
