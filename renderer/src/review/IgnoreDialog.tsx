import { useMutation } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import type { IgnoreKind, IgnoreProposal, ReviewItem } from '../api';
import { Dialog } from '../components/Dialog';
import { ErrorNotice } from '../components/ErrorNotice';
import { useTransport } from '../context';
import { useNames } from '../names/useNames';
import { ignoreMutation } from '../queries/review';
import { useT } from '../store';

interface IgnoreDialogProps {
  item: ReviewItem;
  poster: string | null;
  name: string;
  onClose: () => void;
}

/**
 * "Ignore this object here": asks the engine what it would change on this camera (the item's
 * classes, or a region around the object's boxes), shows it, and applies it only when the operator
 * confirms; then says how to undo it.
 */
export function IgnoreDialog({ item, poster, name, onClose }: IgnoreDialogProps) {
  const t = useT();
  const id = useId();
  const transport = useTransport();
  const [kind, setKind] = useState<IgnoreKind>('class');
  const propose = useMutation(ignoreMutation(transport));
  const apply = useMutation(ignoreMutation(transport));
  const { mutate } = propose;

  useEffect(() => mutate({ itemId: item.item_id, kind, apply: false }), [mutate, item.item_id, kind]);

  const proposal = propose.data?.proposal;
  const applied = apply.data?.applied === true;
  return (
    <Dialog title={t('ignore.title', { name })} onClose={onClose} wide>
      <fieldset className="ignore-kinds" disabled={applied}>
        <legend>{t('ignore.kind')}</legend>
        {(['class', 'mask'] as const).map((value) => (
          <label key={value} htmlFor={`${id}-${value}`}>
            <input
              id={`${id}-${value}`}
              type="radio"
              name={`${id}-kind`}
              checked={kind === value}
              onChange={() => setKind(value)}
            />{' '}
            {t(value === 'class' ? 'ignore.kindClass' : 'ignore.kindMask')}
          </label>
        ))}
      </fieldset>
      {propose.isPending && <p role="status">{t('common.loading')}</p>}
      {propose.isError && <ErrorNotice error={propose.error} />}
      {proposal && <ProposalView proposal={proposal} poster={poster} name={name} />}
      {applied ? (
        <p role="status" className="notice">
          {t('ignore.applied')} {apply.data?.proposal.undo ?? t('ignore.undo')}
        </p>
      ) : (
        <p className="hint">{t('ignore.confirmHint')}</p>
      )}
      {apply.isError && <ErrorNotice error={apply.error} />}
      <div className="dialog-actions">
        <button type="button" onClick={onClose}>
          {applied ? t('ignore.done') : t('common.cancel')}
        </button>
        {!applied && (
          <button
            type="button"
            className="danger-solid"
            disabled={!proposal || apply.isPending}
            onClick={() => apply.mutate({ itemId: item.item_id, kind, apply: true })}
          >
            {t('ignore.apply', { name })}
          </button>
        )}
      </div>
    </Dialog>
  );
}

function ProposalView({
  proposal,
  poster,
  name,
}: {
  proposal: IgnoreProposal;
  poster: string | null;
  name: string;
}) {
  const t = useT();
  const names = useNames();
  if (proposal.kind === 'class')
    return (
      <p className="ignore-proposal">
        {t('ignore.classProposal', {
          classes: proposal.classes.map((id) => names.class(id, proposal.app_ids)).join(', '),
          apps: proposal.app_ids.map(names.app).join(', '),
          name,
        })}
      </p>
    );
  const { width, height } = proposal.frame;
  const points = proposal.polygon.map((point) => `${point.x},${point.y}`).join(' ');
  return (
    <figure className="ignore-proposal">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={t('ignore.maskAlt', { name })}>
        {poster && <image href={poster} width={width} height={height} preserveAspectRatio="none" />}
        <polygon className="ignore-mask" points={points} />
      </svg>
      <figcaption>{t('ignore.maskProposal', { name })}</figcaption>
    </figure>
  );
}
