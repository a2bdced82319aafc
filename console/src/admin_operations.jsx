// Administrators: Phantom's own operating figures over the last hour (requests, errors,
// throttling, latency, launches, the work queue, death to replacement), as the deployment's
// Prometheus scraped them (Phantom's GetOperatingMetrics). Plain SVG, one small chart a figure.
import { list } from './api.js';
import { ErrorBox, Loading, useData, useSession } from './ui.jsx';

const W = 280;
const H = 70;

function fmt(v) {
  if (v === null || v === undefined) return 'no data';
  return Math.abs(v) >= 100 ? v.toFixed(0) : Number(v.toPrecision(3)).toString();
}

function Figure({ series }) {
  const all = list(series.Datapoints).map((d) => (d.Value === undefined ? null : Number(d.Value)));
  // From just before the first datapoint above zero (a deployment younger than the hour; the
  // queries count no event as 0).
  const first = all.findIndex((v) => v !== null && v !== 0);
  const points = first > 1 ? all.slice(first - 1) : all;
  const values = points.filter((v) => v !== null);
  const top = Math.max(...values, 0) * 1.15 || 1;
  const x = (i) => (i / Math.max(1, points.length - 1)) * W;
  const y = (v) => H - 4 - (v / top) * (H - 8);
  const last = values.length ? values[values.length - 1] : null;
  const path = points
    .map((v, i) => (v === null ? null : `${x(i).toFixed(1)},${y(v).toFixed(1)}`))
    .filter(Boolean)
    .join(' ');
  const summary = `${series.Name}: ${fmt(last)}${last === null ? '' : ` ${series.Unit}`} now`;
  return (
    <figure class="metric-chart figure" aria-label={series.Name}>
      <figcaption>{summary}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={summary}>
        <line class="axis" x1="0" y1={H - 4} x2={W} y2={H - 4} />
        {path && <polyline class="metric" points={path} />}
        {/* A figure with one datapoint so far (a rare event's first) is a dot. */}
        {values.length === 1 && (
          <circle
            class="metric"
            r="2.5"
            cx={Math.min(W - 3, Math.max(3, x(points.findIndex((v) => v !== null))))}
            cy={y(values[0])}
          />
        )}
      </svg>
    </figure>
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
          No metric source is set in this deployment: an administrator sets the Prometheus that scrapes Phantom (phantomctl
          metric-source set, or PutMetricSource).
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
