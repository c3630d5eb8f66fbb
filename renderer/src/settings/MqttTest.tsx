import { useMutation } from '@tanstack/react-query';
import { type MqttTestResult, testMqtt } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { useTransport } from '../context';
import { useT } from '../store';

/**
 * "Test connection": connects once with the settings as entered, not saved (the stored password
 * serves when none is typed), and says in words what came of it and what to check.
 */
export function MqttTest({ body }: { body: () => Record<string, unknown> }) {
  const t = useT();
  const transport = useTransport();
  const test = useMutation({ mutationFn: () => testMqtt(transport, body()) });
  const result: MqttTestResult | undefined = test.data;
  return (
    <div className="mqtt-test">
      <button type="button" onClick={() => test.mutate()} disabled={test.isPending}>
        {test.isPending ? t('mqtt.testing') : t('mqtt.test')}
      </button>
      {result && !test.isPending && (
        <p className={result.ok ? 'notice' : 'notice notice-error'} role="status">
          <strong>{t(`mqtt.outcome.${result.outcome}`)}</strong>{' '}
          {result.outcome === 'connected'
            ? t('mqtt.testTook', { ms: result.elapsed_ms })
            : t(`mqtt.hint.${result.outcome}`)}
          {result.detail && <span className="meta"> ({result.detail})</span>}
        </p>
      )}
      {test.isError && <ErrorNotice error={test.error} />}
    </div>
  );
}
