import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { type OptimizationView, type Proposal, updateApp } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorNotice } from '../components/ErrorNotice';
import { useTransport } from '../context';
import { useNames } from '../names/useNames';
import {
  decimal,
  hasVerdicts,
  proposalAction,
  type RuleUpdate,
  signed,
  undoOf,
} from '../optimization/proposals';
import { invalidateRuns } from '../queries/optimizations';
import { invalidatePackages } from '../queries/packages';
import { useT } from '../store';

interface Applied {
  app: string;
  name: string;
  threshold: number;
  /** The update that puts the rule back as it was; null once undone. */
  undo: RuleUpdate | null;
}

const keyOf = (proposal: Pick<Proposal, 'app_id' | 'class_id'>) => `${proposal.app_id}\n${proposal.class_id}`;

/**
 * The proposed threshold of each class of the run's apps, with what it would change, and the 4.3
 * update that applies it in one click. The row then shows the rule's new threshold as current.
 */
export function OptimizationProposals({ run }: { run: OptimizationView }) {
  const t = useT();
  const names = useNames();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const titleId = useId();
  const [applied, setApplied] = useState<Applied | null>(null);
  // Applying changes the live rule: asked first, and undone from the notice.
  const [confirming, setConfirming] = useState<Proposal | null>(null);
  const reread = () =>
    Promise.all([invalidateRuns(queryClient, run.task_id), invalidatePackages(queryClient)]);

  const apply = useMutation({
    mutationFn: async (proposal: Proposal) => {
      const action = proposalAction(proposal);
      if (action.kind !== 'apply') throw new Error(t('optimization.cannotApply'));
      const { zapkId, appId, body } = action.update;
      await updateApp(transport, zapkId, appId, body);
      return { proposal, undo: undoOf(action.update, proposal) };
    },
    onSuccess: ({ proposal, undo }) =>
      setApplied({
        app: proposal.app_id,
        name: proposal.name,
        threshold: proposal.proposed_threshold ?? 0,
        undo,
      }),
    // Pending until the proposals are read again: each one's request carries the app's whole class
    // list, so no other may be sent from the list as it was before this change.
    onSettled: reread,
  });
  const undo = useMutation({
    mutationFn: async (done: Applied & { undo: RuleUpdate }) => {
      await updateApp(transport, done.undo.zapkId, done.undo.appId, done.undo.body);
      return done;
    },
    onSuccess: (done) => setApplied({ ...done, undo: null }),
    onSettled: reread,
  });

  return (
    <section className="card proposals" aria-labelledby={titleId}>
      <h3 id={titleId}>{t('optimization.proposals')}</h3>
      <p className="hint">{t('optimization.proposalsHint')}</p>
      {apply.isError && <ErrorNotice error={apply.error} />}
      {undo.isError && <ErrorNotice error={undo.error} />}
      <p role="status" className={applied ? 'notice' : 'visually-hidden'}>
        {applied &&
          (applied.undo
            ? t('optimization.applied', {
                name: applied.name,
                app: applied.app,
                threshold: decimal(applied.threshold),
              })
            : t('defects.optimization.undone', { name: applied.name, app: applied.app }))}
      </p>
      {applied?.undo && (
        <button
          type="button"
          disabled={undo.isPending || apply.isPending}
          onClick={() => applied.undo && undo.mutate({ ...applied, undo: applied.undo })}
        >
          {t('defects.optimization.undo')}
        </button>
      )}
      {confirming && (
        <ConfirmDialog
          title={t('defects.optimization.confirmTitle')}
          message={t('defects.optimization.confirmMessage', {
            name: confirming.name,
            app: confirming.app_id,
            from: decimal(confirming.current_threshold),
            to: decimal(confirming.proposed_threshold),
          })}
          confirmLabel={t('optimization.apply', { threshold: decimal(confirming.proposed_threshold) })}
          onConfirm={() => apply.mutate(confirming)}
          onClose={() => setConfirming(null)}
        />
      )}
      {run.proposals.length === 0 ? (
        <p>{t('optimization.noProposals')}</p>
      ) : (
        <div className="table-scroll">
          <table className="proposals-table">
            <caption className="visually-hidden">{t('optimization.proposals')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('optimization.col.app')}</th>
                <th scope="col">{t('optimization.col.class')}</th>
                <th scope="col" className="num">
                  {t('optimization.col.current')}
                </th>
                <th scope="col" className="num">
                  {t('optimization.col.proposed')}
                </th>
                <th scope="col" className="num">
                  {t('optimization.col.f1')}
                </th>
                <th scope="col" className="num">
                  {t('optimization.col.alarms')}
                </th>
                <th scope="col">{t('optimization.col.basis')}</th>
                <th scope="col">{t('optimization.col.action')}</th>
              </tr>
            </thead>
            <tbody>
              {run.proposals.map((proposal) => {
                const action = proposalAction(proposal);
                const pending =
                  apply.isPending && apply.variables && keyOf(apply.variables) === keyOf(proposal);
                const change = proposal.alarms.change;
                return (
                  <tr key={keyOf(proposal)}>
                    <td>{names.app(proposal.app_id)}</td>
                    <th scope="row">
                      {proposal.name}{' '}
                      <span className="sub">{t('optimization.classId', { id: proposal.class_id })}</span>
                    </th>
                    <td className="num">{decimal(proposal.current_threshold)}</td>
                    <td className="num strong">{decimal(proposal.proposed_threshold)}</td>
                    <td className="num">
                      {hasVerdicts(proposal)
                        ? `${decimal(proposal.f1.current)} → ${decimal(proposal.f1.proposed)}`
                        : t('defects.optimization.noVerdicts')}
                    </td>
                    <td className="num">
                      {proposal.alarms.current} → {proposal.alarms.proposed}{' '}
                      <span className={change > 0 ? 'change-up' : change < 0 ? 'change-down' : 'sub-inline'}>
                        ({signed(change)})
                      </span>
                    </td>
                    <td className="basis">
                      {t('optimization.basis', {
                        stable: proposal.basis.stable_tracks,
                        flickering: proposal.basis.flickering_tracks,
                        right: proposal.basis.right,
                        wrong: proposal.basis.wrong,
                        missed: proposal.basis.missed,
                      })}
                    </td>
                    <td>
                      {action.kind === 'apply' ? (
                        <button
                          type="button"
                          className="primary"
                          disabled={apply.isPending}
                          aria-label={t('optimization.applyLabel', {
                            threshold: decimal(proposal.proposed_threshold),
                            name: proposal.name,
                            app: proposal.app_id,
                          })}
                          onClick={() => setConfirming(proposal)}
                        >
                          {pending
                            ? t('common.saving')
                            : t('optimization.apply', { threshold: decimal(proposal.proposed_threshold) })}
                        </button>
                      ) : (
                        <span className="sub">
                          {action.kind === 'none'
                            ? t('optimization.noEvidence')
                            : action.kind === 'same'
                              ? t('optimization.sameThreshold')
                              : t('optimization.invalidProposal', { reason: action.reason })}
                        </span>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
