// A group's capacity over its life (the last 3 hours at most): desired, InService and pending, as the deployment's
// Prometheus scraped the group's metrics (Phantom's GetGroupMetrics), with the group's scaling
// activities marked on the time line (`chart.jsx`). A group without these metrics
// enabled is offered a button that enables them (EnableMetricsCollection).
import { list } from './api.js';
import { Chart } from './chart.jsx';
import { Button, ErrorBox, useAction, useData, useSession } from './ui.jsx';

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
        <CapacityHistory name={name} minutes={span(group.CreatedTime)} activities={activities} />
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
        This group collects no capacity metrics. Enabled, its desired, InService and pending capacity are published each minute and charted
        here from the deployment's Prometheus.
      </p>
      <ErrorBox error={error} />
      <Button busy={busy} onClick={enable}>
        Enable capacity metrics
      </Button>
    </>
  );
}

function CapacityHistory({ name, minutes, activities }) {
  const { api } = useSession();
  const metrics = useData(
    () => api.phantom('GetGroupMetrics', { AutoScalingGroupName: name, Minutes: minutes }),
    [api, name, minutes],
    15000,
  );
  const m = metrics.data;
  if (!m) {
    const noSource = metrics.error && /No metric source/.test(metrics.error.message || '');
    return noSource ? (
      <p class="muted" role="status">
        No metric source is set in this deployment, so there is no history to chart: an administrator sets the Prometheus that scrapes
        Phantom's group metrics.
      </p>
    ) : (
      <ErrorBox error={metrics.error} />
    );
  }
  const series = CHARTED.map(([metric, label, cls]) => {
    const s = list(m.Series).find((x) => x.Metric === metric);
    const points = list(s?.Datapoints).map((d) => ({
      t: new Date(d.Timestamp).getTime(),
      y: d.Value === undefined ? null : Number(d.Value),
    }));
    return { metric, label, cls, enabled: Boolean(s?.Enabled), points };
  });
  const all = series.flatMap((s) => s.points);
  const start = all.length ? Math.min(...all.map((p) => p.t)) : 0;
  const end = all.length ? Math.max(...all.map((p) => p.t)) : 1;
  const marks = activities
    .map((a) => ({ at: new Date(a.StartTime).getTime(), text: a.Cause || a.Description || '', cls: 'activity' }))
    .filter((a) => a.at >= start && a.at <= end + 60000);
  // From the first datapoint with a value or the first activity, whichever is earlier: a group
  // younger than the span does not sit in a corner of it.
  const known = all.filter((p) => p.y !== null).map((p) => p.t);
  const from = known.length ? Math.min(...known, ...marks.map((a) => a.at)) : start;
  const shown = series.map((s) => ({ ...s, points: s.points.filter((p) => p.t >= from) }));
  const now = series
    .filter((s) => s.enabled)
    .map((s) => {
      const last = [...s.points].reverse().find((p) => p.y !== null);
      return `${s.label} ${last ? last.y : 'no data'}`;
    })
    .join(', ');
  const summary = `Now ${now}; ${marks.length} scaling ${marks.length === 1 ? 'activity' : 'activities'} in the last ${spanWords(minutes)}`;
  const off = series.filter((s) => !s.enabled).map((s) => s.label);
  return (
    <>
      <Chart class="capacity-chart" series={shown} marks={marks} caption={summary} captionId="capacity-caption" />
      {off.length > 0 && <p class="muted">Not enabled: {off.join(', ')}.</p>}
      <ErrorBox error={metrics.error} />
    </>
  );
}
