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
          {t('ignore.applied')} {t('ignore.undo')}
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
  // The mask is in the source frame's pixels: the snapshot's own size.
  const [frame, setFrame] = useState<{ width: number; height: number } | null>(null);
  if (proposal.kind === 'class')
    return (
      <p className="ignore-proposal">
        {t('ignore.classProposal', {
          classes: proposal.classes.map((id) => names.class(id, proposal.apps)).join(', '),
          apps: proposal.apps.map(names.app).join(', '),
          name,
        })}
      </p>
    );
  const points = (proposal.mask ?? []).map(([x, y]) => `${x},${y}`).join(' ');
  return (
    <figure className="ignore-proposal">
      <div className="ignore-stage">
        {poster && (
          <img
            src={poster}
            alt=""
            onLoad={(event) =>
              setFrame({ width: event.currentTarget.naturalWidth, height: event.currentTarget.naturalHeight })
            }
          />
        )}
        {frame && (
          <svg
            viewBox={`0 0 ${frame.width} ${frame.height}`}
            preserveAspectRatio="none"
            role="img"
            aria-label={t('ignore.maskAlt', { name })}
          >
            <polygon className="ignore-mask" points={points} />
          </svg>
        )}
      </div>
      <figcaption>
        {t('ignore.maskProposal', {
          name,
          percent: Math.round((proposal.frame_fraction ?? 0) * 100),
        })}
      </figcaption>
    </figure>
  );
}
