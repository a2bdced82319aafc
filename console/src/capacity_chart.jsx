// A group's capacity over its life (the last 3 hours at most): desired, InService and pending, as the deployment's
// Prometheus scraped the group's metrics (Phantom's GetGroupMetrics), with the group's scaling
// activities marked on the time line. Plain SVG, no chart library. A group without these metrics
// enabled is offered a button that enables them (EnableMetricsCollection).
import { list } from './api.js';
import { lines } from './metric_chart.jsx';
import { Button, ErrorBox, time, useAction, useData, useSession } from './ui.jsx';

const W = 600;
const H = 170;
const PAD = { left: 32, right: 10, top: 10, bottom: 22 };
/** The span charted: the group's life so far, at least 5 minutes and at most 3 hours. */
function span(created) {
  const age = Math.ceil((Date.now() - new Date(created).getTime()) / 60000) + 1;
  return Math.min(180, Math.max(5, Number.isFinite(age) ? age : 180));
}

function spanWords(minutes) {
  return minutes % 60 === 0 ? `${minutes / 60} hour${minutes === 60 ? '' : 's'}` : `${minutes} minutes`;
}
/** What the chart shows: AWS's metric, its label, its line's class. */
const CHARTED = [
  ['GroupDesiredCapacity', 'desired', 'desired'],
  ['GroupInServiceInstances', 'InService', 'in-service'],
  ['GroupPendingInstances', 'pending', 'pending'],
];

export function CapacityChart({ group, activities, onChanged }) {
  const name = group.AutoScalingGroupName;
  const enabled = list(group.EnabledMetrics).map((m) => m.Metric);
  const missing = CHARTED.map(([m]) => m).filter((m) => !enabled.includes(m));
  return (
    <section class="panel" aria-labelledby="capacity-title">
      <h2 id="capacity-title">Capacity over time</h2>
      {missing.length === CHARTED.length ? (
        <EnableMetrics name={name} metrics={missing} onChanged={onChanged} />
      ) : (
        <Chart name={name} minutes={span(group.CreatedTime)} activities={activities} />
      )}
    </section>
  );
}

function EnableMetrics({ name, metrics, onChanged }) {
  const { api } = useSession();
  const { run, busy, error } = useAction();
  const enable = () =>
    run(async () => {
      await api.query('EnableMetricsCollection', { AutoScalingGroupName: name, Metrics: metrics, Granularity: '1Minute' });
      onChanged();
    });
  return (
    <>
      <p class="muted">
        This group collects no capacity metrics. Enabled, its desired, InService and pending capacity are published each minute
        and charted here from the deployment's Prometheus.
      </p>
      <ErrorBox error={error} />
      <Button busy={busy} onClick={enable}>
        Enable capacity metrics
      </Button>
    </>
  );
}

function Chart({ name, minutes, activities }) {
  const { api } = useSession();
  const metrics = useData(() => api.phantom('GetGroupMetrics', { AutoScalingGroupName: name, Minutes: minutes }), [api, name, minutes], 15000);
  const m = metrics.data;
  if (!m) {
    const noSource = metrics.error && /No metric source/.test(metrics.error.message || '');
    return noSource ? (
      <p class="muted" role="status">
        No metric source is set in this deployment, so there is no history to chart: an administrator sets the Prometheus that
        scrapes Phantom's group metrics.
      </p>
    ) : (
      <ErrorBox error={metrics.error} />
    );
  }
  const series = CHARTED.map(([metric, label, cls]) => {
    const s = list(m.Series).find((x) => x.Metric === metric);
    const points = list(s?.Datapoints).map((d) => ({ t: new Date(d.Timestamp).getTime(), y: d.Value === undefined ? null : Number(d.Value) }));
    return { metric, label, cls, enabled: Boolean(s?.Enabled), points };
  });
  const all = series.flatMap((s) => s.points);
  const start = all.length ? Math.min(...all.map((p) => p.t)) : 0;
  const t1 = all.length ? Math.max(...all.map((p) => p.t)) : 1;
  const inSpan = activities
    .map((a) => ({ at: new Date(a.StartTime).getTime(), cause: a.Cause || a.Description || '' }))
    .filter((a) => a.at >= start && a.at <= t1 + 60000);
  // From the first datapoint with a value or the first activity, whichever is earlier: a group
  // younger than the span does not sit in a corner of it.
  const known = all.filter((p) => p.y !== null).map((p) => p.t);
  const t0 = known.length ? Math.min(...known, ...inSpan.map((a) => a.at)) : start;
  const values = all.filter((p) => p.y !== null).map((p) => p.y);
  const top = Math.max(1, ...values) + 1;
  const x = (t) => PAD.left + ((t - t0) / Math.max(1, t1 - t0)) * (W - PAD.left - PAD.right);
  const y = (v) => PAD.top + (1 - v / top) * (H - PAD.top - PAD.bottom);
  const marks = inSpan;
  const now = series
    .filter((s) => s.enabled)
    .map((s) => {
      const last = [...s.points].reverse().find((p) => p.y !== null);
      return `${s.label} ${last ? last.y : 'no data'}`;
    })
    .join(', ');
  const summary = `Now ${now}; ${marks.length} scaling ${marks.length === 1 ? 'activity' : 'activities'} in the last ${spanWords(minutes)}`;
  return (
    <figure class="metric-chart capacity-chart" aria-labelledby="capacity-caption">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={summary}>
        <line class="axis" x1={PAD.left} y1={H - PAD.bottom} x2={W - PAD.right} y2={H - PAD.bottom} />
        <text class="tick" x={PAD.left - 4} y={y(top) + 4} text-anchor="end">{top}</text>
        <text class="tick" x={PAD.left - 4} y={y(0) + 4} text-anchor="end">0</text>
        <text class="tick" x={PAD.left} y={H - 6}>{time(new Date(t0).toISOString()).slice(11, 16)}</text>
        <text class="tick" x={W - PAD.right} y={H - 6} text-anchor="end">now</text>
        {marks.map((a) => (
          <line key={`${a.at}-${a.cause}`} class="activity" x1={x(Math.min(a.at, t1))} y1={PAD.top} x2={x(Math.min(a.at, t1))} y2={H - PAD.bottom}>
            <title>{`${time(new Date(a.at).toISOString())}: ${a.cause}`}</title>
          </line>
        ))}
        {series.map((s) =>
          lines(s.points).map((seg) =>
            seg.length === 1 ? (
              <circle key={`${s.cls}-${seg[0].t}`} class={`series ${s.cls}`} cx={x(seg[0].t)} cy={y(seg[0].y)} r="2" />
            ) : (
              <polyline
                key={`${s.cls}-${seg[0].t}`}
                class={`series ${s.cls}`}
                points={seg.map((p) => `${x(p.t).toFixed(1)},${y(p.y).toFixed(1)}`).join(' ')}
              />
            ),
          ),
        )}
      </svg>
      <ul class="legend">
        {series.map((s) => (
          <li key={s.cls} class={s.cls}>
            {s.label}
            {!s.enabled && ' (not enabled)'}
          </li>
        ))}
      </ul>
      <figcaption id="capacity-caption">{summary}</figcaption>
      <ErrorBox error={metrics.error} />
    </figure>
  );
}
