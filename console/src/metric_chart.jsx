// A metric policy's metric over the last hour against its target (or its alarm's threshold), and
// the scaling it caused: the datapoints from Phantom's GetPolicyMetric, the changes from the
// group's activities whose cause names the policy. Plain SVG, no chart library.
import { list } from './api.js';
import { ErrorBox, time, useData, useSession } from './ui.jsx';

const W = 600;
const H = 160;
const PAD = { left: 44, right: 10, top: 10, bottom: 22 };

/** Whether a policy follows a metric: target tracking, or a step policy with an alarm. */
export function followsMetric(policy) {
  return policy.PolicyType === 'TargetTrackingScaling' || (policy.PolicyType === 'StepScaling' && list(policy.Alarms).length > 0);
}

/** The activities `policy` caused, as {at (ms), from, to}. */
export function causedBy(activities, policy) {
  const marker = `triggered policy ${policy} changing the desired capacity from `;
  return activities
    .map((a) => {
      const cause = a.Cause || '';
      const i = cause.indexOf(marker);
      if (i < 0) return null;
      const m = cause.slice(i + marker.length).match(/^(\d+) to (\d+)/);
      return m && { at: new Date(a.StartTime).getTime(), from: Number(m[1]), to: Number(m[2]) };
    })
    .filter(Boolean);
}

/** The points' polylines, broken where the metric had no datapoint (the capacity chart's too). */
export function lines(points) {
  const out = [];
  let current = [];
  for (const p of points) {
    if (p.y === null) {
      if (current.length) out.push(current);
      current = [];
    } else current.push(p);
  }
  if (current.length) out.push(current);
  return out;
}

export function MetricChart({ group, policy, activities }) {
  const { api } = useSession();
  const metric = useData(
    () => api.phantom('GetPolicyMetric', { AutoScalingGroupName: group, PolicyName: policy.PolicyName, Minutes: 60 }),
    [api, group, policy.PolicyName],
    15000,
  );
  const title = `metric-${policy.PolicyName}`;
  const m = metric.data;
  if (!m) return <ErrorBox error={metric.error} />;
  const against = m.Target ?? m.Threshold;
  const word = m.Target !== undefined ? 'target' : 'threshold';
  const all = list(m.Datapoints).map((d) => ({ t: new Date(d.Timestamp).getTime(), y: d.Value ?? null }));
  // From the first datapoint with a value (a group younger than the hour), keeping one before it.
  const first = all.findIndex((p) => p.y !== null);
  const points = first > 0 ? all.slice(first - 1) : all;
  const values = points.filter((p) => p.y !== null).map((p) => p.y);
  const t0 = points[0]?.t ?? 0;
  const t1 = points[points.length - 1]?.t ?? 1;
  const top = Math.max(against, ...values) * 1.15 || 1;
  const bottom = Math.min(0, ...values);
  const x = (t) => PAD.left + ((t - t0) / Math.max(1, t1 - t0)) * (W - PAD.left - PAD.right);
  const y = (v) => PAD.top + (1 - (v - bottom) / (top - bottom)) * (H - PAD.top - PAD.bottom);
  const last = values.length ? values[values.length - 1] : null;
  const changes = causedBy(activities, policy.PolicyName).filter((c) => c.at >= t0 && c.at <= t1);
  const fmt = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : Number(v.toPrecision(3)).toString());
  const summary =
    `${policy.PolicyName}: ` +
    (last === null ? 'no data in the last hour' : `now ${fmt(last)}`) +
    ` against its ${word} ${fmt(against)}; ${changes.length} scaling change${changes.length === 1 ? '' : 's'} in the last hour`;
  return (
    <figure class="metric-chart" aria-labelledby={title}>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={summary}>
        <line class="axis" x1={PAD.left} y1={H - PAD.bottom} x2={W - PAD.right} y2={H - PAD.bottom} />
        <text class="tick" x={PAD.left - 4} y={y(top) + 4} text-anchor="end">{fmt(top)}</text>
        <text class="tick" x={PAD.left - 4} y={y(bottom) + 4} text-anchor="end">{fmt(bottom)}</text>
        <text class="tick" x={PAD.left} y={H - 6}>{time(new Date(t0).toISOString()).slice(11, 16)}</text>
        <text class="tick" x={W - PAD.right} y={H - 6} text-anchor="end">now</text>
        <line class="target" x1={PAD.left} y1={y(against)} x2={W - PAD.right} y2={y(against)} data-value={against}>
          <title>{`${word} ${against}`}</title>
        </line>
        {changes.map((c) => (
          <line key={c.at} class={`change ${c.to > c.from ? 'out' : 'in'}`} x1={x(c.at)} y1={PAD.top} x2={x(c.at)} y2={H - PAD.bottom}>
            <title>{`${time(new Date(c.at).toISOString())}: ${c.from} → ${c.to}`}</title>
          </line>
        ))}
        {lines(points).map((seg) =>
          seg.length === 1 ? (
            <circle class="metric" cx={x(seg[0].t)} cy={y(seg[0].y)} r="2" />
          ) : (
            <polyline class="metric" points={seg.map((p) => `${x(p.t).toFixed(1)},${y(p.y).toFixed(1)}`).join(' ')} />
          ),
        )}
      </svg>
      <figcaption id={title}>{summary}</figcaption>
      <ErrorBox error={metric.error} />
    </figure>
  );
}
