import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { type OptimizationView, type Proposal, updateApp, updateTask } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorNotice } from '../components/ErrorNotice';
import { useTransport } from '../context';
import { useNames } from '../names/useNames';
import {
  decimal,
  hasVerdicts,
  type ProposalTarget,
  proposalAction,
  type RuleUpdate,
  signed,
  undoOf,
} from '../optimization/proposals';
import { invalidateRuns } from '../queries/optimizations';
import { invalidatePackages } from '../queries/packages';
import { invalidateTask } from '../queries/tasks';
import { useT } from '../store';
import type { Transport } from '../transport';

interface Applied {
  app: string;
  name: string;
  threshold: number;
  target: ProposalTarget;
  /** The update that puts the rule back as it was; null once undone. */
  undo: RuleUpdate | null;
}

const keyOf = (proposal: Pick<Proposal, 'app_id' | 'class_id'>) => `${proposal.app_id}\n${proposal.class_id}`;

/** Sends a proposal's update: the camera's override (update-task) or the app's rule (4.3). */
async function send(transport: Transport, update: RuleUpdate): Promise<void> {
  if (update.target === 'camera') await updateTask(transport, update.taskId, update.body);
  else await updateApp(transport, update.zapkId, update.appId, update.body);
}

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
  const [confirming, setConfirming] = useState<{ proposal: Proposal; target: ProposalTarget } | null>(null);
  const reread = () =>
    Promise.all([
      invalidateRuns(queryClient, run.task_id),
      invalidatePackages(queryClient),
      invalidateTask(queryClient, run.task_id),
    ]);

  const apply = useMutation({
    mutationFn: async ({ proposal, target }: { proposal: Proposal; target: ProposalTarget }) => {
      const action = proposalAction(proposal, target);
      if (action.kind !== 'apply') throw new Error(t('optimization.cannotApply'));
      await send(transport, action.update);
      return { proposal, target, undo: undoOf(action.update, proposal) };
    },
    onSuccess: ({ proposal, target, undo }) =>
      setApplied({
        app: proposal.app_id,
        name: proposal.name,
        threshold: proposal.proposed_threshold ?? 0,
        target,
        undo,
      }),
    // Pending until the proposals are read again: each one's request carries the app's whole class
    // list, so no other may be sent from the list as it was before this change.
    onSettled: reread,
  });
  const undo = useMutation({
    mutationFn: async (done: Applied & { undo: RuleUpdate }) => {
      await send(transport, done.undo);
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
            ? t(applied.target === 'camera' ? 'overrides.appliedCamera' : 'optimization.applied', {
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
          message={t(
            confirming.target === 'camera'
              ? 'overrides.confirmCamera'
              : 'defects.optimization.confirmMessage',
            {
              name: confirming.proposal.name,
              app: confirming.proposal.app_id,
              from: decimal(
                confirming.target === 'camera'
                  ? confirming.proposal.current_threshold
                  : confirming.proposal.app_threshold,
              ),
              to: decimal(confirming.proposal.proposed_threshold),
            },
          )}
          confirmLabel={t('optimization.apply', {
            threshold: decimal(confirming.proposal.proposed_threshold),
          })}
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
                const actions = (['camera', 'app'] as const).map(
                  (target) => [target, proposalAction(proposal, target)] as const,
                );
                const offered = actions.filter(([, action]) => action.kind === 'apply');
                const other = actions.map(([, action]) => action).find((action) => action.kind !== 'apply');
                const pending =
                  apply.isPending && apply.variables && keyOf(apply.variables.proposal) === keyOf(proposal);
                const change = proposal.alarms.change;
                const threshold = decimal(proposal.proposed_threshold);
                return (
                  <tr key={keyOf(proposal)}>
                    <td>{names.app(proposal.app_id)}</td>
                    <th scope="row">
                      {proposal.name}{' '}
                      <span className="sub">{t('optimization.classId', { id: proposal.class_id })}</span>
                    </th>
                    <td className="num">{decimal(proposal.current_threshold)}</td>
                    <td className="num strong">{threshold}</td>
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
                      <strong>{t('overrides.judged', { count: proposal.judged })}</strong>{' '}
                      {t('optimization.basis', {
                        stable: proposal.basis.stable_tracks,
                        flickering: proposal.basis.flickering_tracks,
                        right: proposal.basis.right,
                        wrong: proposal.basis.wrong,
                        missed: proposal.basis.missed,
                      })}
                    </td>
                    <td>
                      {offered.map(([target]) => (
                        <button
                          key={target}
                          type="button"
                          className={target === 'camera' ? 'primary' : undefined}
                          disabled={apply.isPending}
                          aria-label={t(
                            target === 'camera' ? 'overrides.applyCameraLabel' : 'overrides.applyAppLabel',
                            { threshold, name: proposal.name, app: proposal.app_id },
                          )}
                          onClick={() => setConfirming({ proposal, target })}
                        >
                          {pending
                            ? t('common.saving')
                            : t(target === 'camera' ? 'overrides.applyCamera' : 'overrides.applyApp', {
                                threshold,
                              })}
                        </button>
                      ))}
                      {offered.length === 0 && other && (
                        <span className="sub">
                          {other.kind === 'none'
                            ? t(proposal.judged === 0 ? 'overrides.noJudged' : 'optimization.noEvidence')
                            : other.kind === 'same'
                              ? t('optimization.sameThreshold')
                              : other.kind === 'invalid'
                                ? t('optimization.invalidProposal', { reason: other.reason })
                                : null}
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
