import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { fileToBase64, type ImageResult, isRunning, type TaskSummary, uploadDiff, uploadImage } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { useTransport } from '../context';
import { ResultCard } from '../images/ResultCard';
import { imageResultsQuery, mergeResults, type Upload, useUploads } from '../images/results';
import { invalidateTask, RUNNING, tasksQuery } from '../queries/tasks';
import { paths } from '../routes';
import { useT } from '../store';
import { taskTitle } from '../tasks/title';

/** The engine takes an image per task at most every second (42901 otherwise). */
const UPLOAD_SPACING_MS = 1100;

const NO_UPLOADS: readonly Upload[] = [];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Image and diff tasks (4.8, 4.9): upload images or pairs from the console and see what was found;
 * the results are read back from the engine, so they stay when the operator leaves and comes back.
 */
export function Images({ taskId }: { taskId: string | null }) {
  const t = useT();
  const transport = useTransport();
  const [, navigate] = useLocation();
  const ids = { task: useId(), title: useId() };
  const tasks = useQuery(tasksQuery(transport, RUNNING));
  const imageTasks = (tasks.data ?? []).filter((task) => task.mode !== 'video' && isRunning(task));
  const task = imageTasks.find((candidate) => candidate.task_id === taskId);

  return (
    <section aria-labelledby={ids.title}>
      <div className="toolbar">
        <h2 id={ids.title}>{t('images.title')}</h2>
        <label htmlFor={ids.task}>{t('live.task')}</label>
        <select
          id={ids.task}
          value={task ? task.task_id : ''}
          onChange={(event) => navigate(paths.images(event.target.value))}
        >
          <option value="">{t('live.chooseTask')}</option>
          {imageTasks.map((candidate) => (
            <option key={candidate.task_id} value={candidate.task_id}>
              {taskTitle(candidate)} · {t(`mode.${candidate.mode}`)} · {candidate.app_ids.join(', ')}
            </option>
          ))}
        </select>
      </div>
      {tasks.isError && <ErrorNotice error={tasks.error} />}
      {!task && (
        <div className="notice">
          <p>{imageTasks.length === 0 ? t('images.noTasks') : t('live.pick')}</p>
          <Link className="button" href={paths.tasks}>
            {t('images.toTasks')}
          </Link>
        </div>
      )}
      {task && <Uploads key={task.task_id} task={task} />}
    </section>
  );
}

function Uploads({ task }: { task: TaskSummary }) {
  const t = useT();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const ids = { images: useId(), before: useId(), after: useId(), device: useId(), enhance: useId() };
  const diff = task.mode === 'diff';
  const [deviceId, setDeviceId] = useState('');
  const [enhance, setEnhance] = useState(false);
  const [progress, setProgress] = useState<string | null>(null);
  const uploads = useUploads((state) => state.byTask[task.task_id]) ?? NO_UPLOADS;
  const addUpload = useUploads((state) => state.add);
  const stored = useQuery(imageResultsQuery(transport, task.task_id));
  const results = mergeResults(stored.data ?? [], uploads);

  const options = {
    ...(deviceId ? { device_id: deviceId } : {}),
    ...(enhance ? { enhance: 1 as const } : {}),
  };
  const keep = (names: string, result: ImageResult, after: File, before?: File) =>
    addUpload(task.task_id, {
      at: Date.now(),
      names,
      result,
      after: URL.createObjectURL(after),
      ...(before && { before: URL.createObjectURL(before) }),
    });

  const send = useMutation({
    mutationFn: async (files: { images?: File[]; before?: File; after?: File }) => {
      if (diff) {
        const after = files.after as File;
        const images = {
          ...(files.before ? { image_a: await fileToBase64(files.before) } : {}),
          image_b: await fileToBase64(after),
        };
        const result = await uploadDiff(transport, task.task_id, images, options);
        keep([files.before?.name, after.name].filter(Boolean).join(' → '), result, after, files.before);
        return;
      }
      const images = files.images ?? [];
      for (const [index, file] of images.entries()) {
        setProgress(t('images.progress', { index: index + 1, count: images.length, name: file.name }));
        if (index > 0) await sleep(UPLOAD_SPACING_MS);
        keep(file.name, await uploadImage(transport, task.task_id, await fileToBase64(file), options), file);
      }
    },
    // The task's status line counts the images received: fetched again once they are in.
    onSettled: () => {
      setProgress(null);
      void invalidateTask(queryClient, task.task_id);
      void queryClient.invalidateQueries({ queryKey: imageResultsQuery(transport, task.task_id).queryKey });
    },
  });

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const files = (name: string) =>
      data.getAll(name).filter((value): value is File => value instanceof File && value.size > 0);
    if (diff) {
      const after = files('after')[0];
      if (!after) return;
      const before = files('before')[0];
      send.mutate(before ? { before, after } : { after });
    } else {
      const images = files('images');
      if (images.length > 0) send.mutate({ images });
    }
  }

  return (
    <>
      <form className="card upload-form" onSubmit={submit}>
        <p className="meta">
          <span>{t(`mode.${task.mode}`)}</span>
          <span>{task.app_ids.join(', ')}</span>
          <span className="image-count">
            {t('health.images')}: {task.health.images}
          </span>
        </p>
        <div className="field-grid">
          {diff ? (
            <>
              <div className="field">
                <label htmlFor={ids.before}>{t('images.before')}</label>
                <input
                  id={ids.before}
                  name="before"
                  type="file"
                  accept="image/jpeg,image/png,image/bmp,image/webp"
                />
                <span className="hint">{t('images.beforeHint')}</span>
              </div>
              <div className="field">
                <label htmlFor={ids.after}>{t('images.after')}</label>
                <input
                  id={ids.after}
                  name="after"
                  type="file"
                  required
                  accept="image/jpeg,image/png,image/bmp,image/webp"
                />
              </div>
            </>
          ) : (
            <div className="field">
              <label htmlFor={ids.images}>{t('images.files')}</label>
              <input
                id={ids.images}
                name="images"
                type="file"
                multiple
                required
                accept="image/jpeg,image/png,image/bmp,image/webp"
              />
              <span className="hint">{t('images.filesHint')}</span>
            </div>
          )}
          <div className="field">
            <label htmlFor={ids.device}>{t('wizard.device_id')}</label>
            <input id={ids.device} value={deviceId} onChange={(event) => setDeviceId(event.target.value)} />
          </div>
          <label className="switch">
            <input
              id={ids.enhance}
              type="checkbox"
              checked={enhance}
              onChange={(event) => setEnhance(event.target.checked)}
            />
            {t('images.enhance')}
          </label>
        </div>
        <div className="button-row">
          <button type="submit" className="primary" disabled={send.isPending}>
            {send.isPending ? t('images.uploading') : t('images.upload')}
          </button>
          {progress && (
            <span role="status" className="meta">
              {progress}
            </span>
          )}
        </div>
        {send.isError && <ErrorNotice error={send.error} />}
      </form>
      <h3>{t('images.results')}</h3>
      {stored.isError && <ErrorNotice error={stored.error} />}
      {results.length === 0 && <p className="meta">{t('images.noResults')}</p>}
      <ul className="results">
        {results.map((entry) => (
          <ResultCard key={entry.key} entry={entry} diff={diff} />
        ))}
      </ul>
    </>
  );
}
