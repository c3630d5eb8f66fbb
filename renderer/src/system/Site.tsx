import { useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import {
  headroomText,
  type NodeRow,
  nodeRows,
  placementState,
  type Site,
  unplacedText,
} from '../cluster/site';
import { useTransport } from '../context';
import type { Language, Translate } from '../i18n';
import { clusterQuery } from '../queries/cluster';
import { useTaskTitle } from '../tasks/title';

/**
 * The site this engine is a node of: its nodes, which one leads placement, and the leader's verdict
 * (could the others absorb the node worst to lose, which cameras have no place). Nothing on a single
 * workstation.
 */
export function SiteSection({ t, language }: { t: Translate; language: Language }) {
  const transport = useTransport();
  const cluster = useQuery(clusterQuery(transport));
  const id = useId();
  if (!cluster.data?.enabled) return null;
  const site = cluster.data;
  return (
    <section className="card" aria-labelledby={id}>
      <h3 id={id}>{t('site.title')}</h3>
      <Placement site={site} t={t} language={language} />
      <div className="table-scroll">
        <table>
          <caption className="visually-hidden">{t('site.caption')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('site.col.node')}</th>
              <th scope="col">{t('site.col.state')}</th>
              <th scope="col" className="num">
                {t('site.col.cpu')}
              </th>
              <th scope="col" className="num">
                {t('site.col.memory')}
              </th>
              <th scope="col" className="num">
                {t('site.col.cameras')}
              </th>
              <th scope="col">{t('site.col.version')}</th>
            </tr>
          </thead>
          <tbody>
            {nodeRows(site, language, t).map((row) => (
              <NodeLine key={row.name} row={row} t={t} />
            ))}
          </tbody>
        </table>
      </div>
      <p className="sub">{t('site.answering', { node: site.node })}</p>
    </section>
  );
}

const STATE_BADGE: Record<NodeRow['state'], string> = {
  up: 'badge badge-ok',
  silent: 'badge badge-warn',
  gone: 'badge badge-bad',
};

function NodeLine({ row, t }: { row: NodeRow; t: Translate }) {
  return (
    <tr>
      <th scope="row">
        {row.name}
        {row.leader && <span className="badge site-mark">{t('site.leader')}</span>}
        {row.answering && <span className="badge site-mark">{t('site.thisNode')}</span>}
      </th>
      <td>
        <span className={STATE_BADGE[row.state]}>{t(`site.state.${row.state}`)}</span>
      </td>
      <td className="num">{row.cpu}</td>
      <td className="num">{row.memory}</td>
      <td className="num">{row.cameras}</td>
      <td>{row.version}</td>
    </tr>
  );
}

/** The leader's verdict where this node has it; otherwise where it is. */
function Placement({ site, t, language }: { site: Site; t: Translate; language: Language }) {
  const title = useTaskTitle();
  const state = placementState(site);
  if (state.kind === 'no_leader')
    return (
      <p role="alert" className="text-bad">
        {t('site.noLeader')}
      </p>
    );
  if (state.kind === 'pending') return <p className="sub">{t('site.placementPending')}</p>;
  if (state.kind === 'elsewhere')
    return (
      <p className="sub">
        {t('site.placementElsewhere', { leader: state.leader })}
        {state.apiUrl && <code> {state.apiUrl}</code>}
      </p>
    );
  const { headroom, unplaced, rebalancing } = state.placement;
  return (
    <>
      {headroom.ok ? (
        <p className="sub">{headroomText(headroom, language, t)}</p>
      ) : (
        <p role="alert" className="notice notice-warn">
          {headroomText(headroom, language, t)}
        </p>
      )}
      {unplaced.length > 0 && (
        <div role="alert" className="notice notice-warn">
          <p>{t('site.unplacedTitle')}</p>
          <ul>
            {unplaced.map((camera) => (
              <li key={camera.task_id}>{unplacedText(camera, title(camera.task_id), t)}</li>
            ))}
          </ul>
        </div>
      )}
      {rebalancing && <p className="sub">{t('site.rebalancing')}</p>}
    </>
  );
}
