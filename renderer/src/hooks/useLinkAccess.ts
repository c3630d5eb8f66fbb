import { useQuery } from '@tanstack/react-query';
import { useMemo, useSyncExternalStore } from 'react';
import { useTransport } from '../context';
import type { LinkAccess } from '../optimization/links';
import { appInfoQuery } from '../queries/settings';
import { useSession } from '../store';
import type { Transport } from '../transport';
import { LinkSigner, type MintedLinks } from '../transport/link-signer';

/** One signer per transport, shared by every link on the page. */
const signers = new WeakMap<Transport, LinkSigner>();

function signerOf(transport: Transport): LinkSigner {
  let signer = signers.get(transport);
  if (!signer) {
    signer = new LinkSigner(
      async (paths) => (await transport.request<MintedLinks>('POST', '/api/auth/link', { paths })).data,
    );
    signers.set(transport, signer);
  }
  return signer;
}

const noSigner = { subscribe: () => () => {}, snapshot: () => 0 };

/**
 * How links reach the engine: the page's origin with link tokens (web), the engine's origin
 * (desktop). A component that uses it renders again when new link tokens came.
 */
export function useLinkAccess(): LinkAccess | null {
  const transport = useTransport();
  const token = useSession((state) => state.session?.token ?? null);
  const desktop = transport.kind === 'ipc' ? window.visionConsole : undefined;
  const info = useQuery(appInfoQuery(desktop));
  const signer = transport.kind === 'http' ? signerOf(transport) : null;
  const version = useSyncExternalStore((signer ?? noSigner).subscribe, (signer ?? noSigner).snapshot);
  const engineUrl = info.data?.engineUrl;
  return useMemo(() => {
    // A new object whenever tokens came, so that memoised users link again.
    void version;
    if (transport.kind === 'http') return { base: transport.mediaUrl('/'), signer, token };
    return engineUrl ? { base: engineUrl, signer: null, token: null } : null;
  }, [transport, signer, token, engineUrl, version]);
}
