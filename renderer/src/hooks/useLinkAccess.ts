import { useQuery } from '@tanstack/react-query';
import { useTransport } from '../context';
import type { LinkAccess } from '../optimization/links';
import { appInfoQuery } from '../queries/settings';
import { useSession } from '../store';

/** How links reach the engine: the page's origin with the token (web), the engine's origin (desktop). */
export function useLinkAccess(): LinkAccess | null {
  const transport = useTransport();
  const token = useSession((state) => state.session?.token ?? null);
  const desktop = transport.kind === 'ipc' ? window.visionConsole : undefined;
  const info = useQuery(appInfoQuery(desktop));
  if (transport.kind === 'http') return { base: transport.mediaUrl('/'), token };
  return info.data ? { base: info.data.engineUrl, token: null } : null;
}
