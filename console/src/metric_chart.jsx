// A metric policy's metric over the last hour against its target (or its alarm's threshold), and
// the scaling it caused: the datapoints from Phantom's GetPolicyMetric, the changes from the
// group's activities whose cause names the policy, on the console's one chart (`chart.jsx`).
import { list } from './api.js';
import { Chart, fmt } from './chart.jsx';
import { ErrorBox, useData, useSession } from './ui.jsx';

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
  const last = values.length ? values[values.length - 1] : null;
  const changes = causedBy(activities, policy.PolicyName).filter((c) => c.at >= t0 && c.at <= t1);
  const summary =
    `${policy.PolicyName}: ` +
    (last === null ? 'no data in the last hour' : `now ${fmt(last)}`) +
    ` against its ${word} ${fmt(against)}; ${changes.length} scaling change${changes.length === 1 ? '' : 's'} in the last hour`;
  return (
    <>
      <Chart
        class="metric-chart"
        series={[{ label: policy.PolicyName, cls: 'metric', points }]}
        levels={[{ value: against, label: word, cls: 'target' }]}
        marks={changes.map((c) => ({ at: c.at, text: `${c.from} → ${c.to}`, cls: `change ${c.to > c.from ? 'out' : 'in'}` }))}
        caption={summary}
        captionId={title}
        height={160}
      />
      <ErrorBox error={metric.error} />
    </>
  );
}
