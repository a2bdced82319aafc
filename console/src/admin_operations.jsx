// Administrators: Phantom's own operating figures over the last hour (requests, errors,
// throttling, latency, launches, the work queue, death to replacement), as the deployment's
// Prometheus scraped them (Phantom's GetOperatingMetrics), one small chart (`chart.jsx`) a figure.
import { list } from './api.js';
import { Chart, fmt } from './chart.jsx';
import { ErrorBox, Loading, useData, useSession } from './ui.jsx';

/** One figure over the hour: its series from just before its first datapoint above zero (a
 * deployment younger than the hour; the queries count no event as 0). */
function Figure({ series }) {
  const all = list(series.Datapoints).map((d) => ({
    t: new Date(d.Timestamp).getTime(),
    y: d.Value === undefined ? null : Number(d.Value),
  }));
  const first = all.findIndex((p) => p.y !== null && p.y !== 0);
  const points = first > 1 ? all.slice(first - 1) : all;
  const values = points.filter((p) => p.y !== null);
  const last = values.length ? values[values.length - 1].y : null;
  const summary = `${series.Name}: ${fmt(last)}${last === null ? '' : ` ${series.Unit}`} now`;
  return (
    <Chart
      class="figure"
      label={series.Name}
      series={[{ label: series.Name, cls: 'metric', points }]}
      caption={summary}
      height={70}
      compact
    />
  );
}

export function AdminOperationsView() {
  const { api } = useSession();
  const ops = useData(() => api.phantom('GetOperatingMetrics', { Minutes: 60 }), [api], 15000);
  const noSource = ops.error && /No metric source/.test(ops.error.message || '');
  return (
    <section aria-labelledby="operations-title">
      <h1 id="operations-title">Operations</h1>
      <p class="muted">Phantom's own figures over the last hour, from the deployment's Prometheus, which scrapes them.</p>
      {noSource ? (
        <p role="status">
          No metric source is set in this deployment: an administrator sets the Prometheus that scrapes Phantom (phantomctl metric-source
          set, or PutMetricSource).
        </p>
      ) : (
        <ErrorBox error={ops.error} />
      )}
      <Loading state={ops} what="the figures" />
      {ops.data && (
        <div class="figures">
          {list(ops.data.Series).map((s) => (
            <Figure key={s.Name} series={s} />
          ))}
        </div>
      )}
    </section>
  );
}
