import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { useTransport } from '../context';
import { useNow } from '../hooks/useNow';
import { clusterQuery } from '../queries/cluster';
import { useSession, useT } from '../store';
import { ApiError } from '../transport';
import { FOLLOW_AFTER_MS, type FollowTarget, followTargets, handoffUrl } from './follow';
import type { Site } from './site';

/**
 * Web console on a node of a site: when that node stops answering (its site view cannot be read:
 * no answer at all, not an error it sent), offers the other nodes that were up when last seen, and
 * moves to the first of them after FOLLOW_AFTER_MS, unless the node answers again meanwhile.
 */
export function FollowNotice() {
  const cluster = useQuery(clusterQuery(useTransport()));
  const site = cluster.data?.enabled ? cluster.data : null;
  const unreachable = cluster.isError && cluster.error instanceof ApiError && cluster.error.status === 0;
  return site && unreachable ? <Following site={site} /> : null;
}

/** Mounted while the node does not answer: the countdown runs from then. */
function Following({ site }: { site: Site }) {
  const t = useT();
  const now = useNow(1000);
  const [lostAt] = useState(() => Date.now());
  const moving = useRef(false);
  const targets = followTargets(site, window.location.origin);
  const first = targets[0];
  const left = Math.max(0, Math.ceil((lostAt + FOLLOW_AFTER_MS - now) / 1000));
  useEffect(() => {
    if (left !== 0 || !first || moving.current) return;
    moving.current = true;
    follow(first);
  }, [left, first]);

  return (
    <div role="alert" className="notice notice-warn follow-notice">
      <p>
        {first
          ? t('follow.lost', { node: site.node, target: first.node, seconds: left })
          : t('follow.lostAlone', { node: site.node })}
      </p>
      {targets.map((target) => (
        <button key={target.node} type="button" onClick={() => follow(target)}>
          {t('follow.goTo', { node: target.node })}
        </button>
      ))}
    </div>
  );
}

/** Opens the target's console with this session in the address's fragment (cluster/follow.ts). */
function follow(target: FollowTarget): void {
  const session = useSession.getState().session;
  if (!session) return;
  const path = window.location.hash.replace(/^#/, '') || '/';
  window.location.assign(
    handoffUrl(target, {
      token: session.token,
      username: session.username,
      expiresAt: session.expiresAt,
      path,
    }),
  );
}
