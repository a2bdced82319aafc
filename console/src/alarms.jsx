// A group's CloudWatch alarms at Phantom's endpoint (DescribeAlarms): those on its metrics (an
// AutoScalingGroupName dimension of it) or acting on its policies, its target tracking
// policies' two among them; each with its state and condition, and, where it watches a metric by
// name, that metric over the last hour against its threshold (GetMetricStatistics) on the
// console's one chart. A PromQL alarm's chart is its policy's (`metric_chart.jsx`).
import { list } from './api.js';
import { Chart, fmt } from './chart.jsx';
import { ErrorBox, Loading, StackTable, useData, useSession } from './ui.jsx';

const WORDS = {
  GreaterThanThreshold: '>',
  GreaterThanOrEqualToThreshold: '≥',
  LessThanThreshold: '<',
  LessThanOrEqualToThreshold: '≤',
};

/** Whether `alarm` is about group `group`: on one of its metrics, or acting on its policies. */
export function ofGroup(alarm, group) {
  const dimension = list(alarm.Dimensions).some((d) => d.Name === 'AutoScalingGroupName' && d.Value === group);
  const acts = [...list(alarm.AlarmActions), ...list(alarm.OKActions), ...list(alarm.InsufficientDataActions)].some((arn) =>
    arn.includes(`:autoScalingGroupName/${group}:policyName/`),
  );
  return dimension || acts;
}

/** What an alarm watches, as a line of text. */
export function watched(alarm) {
  if (alarm.Namespace && alarm.MetricName) return `${alarm.Namespace} ${alarm.MetricName} (${alarm.Statistic || alarm.ExtendedStatistic || 'Average'})`;
  const q = list(alarm.Metrics).find((m) => m.Expression);
  return q ? `PromQL ${q.Expression}` : 'its metrics';
}

/** An alarm's condition: `> 60 for 3 of 3 periods of 60 s`. */
export function condition(alarm) {
  const n = alarm.EvaluationPeriods;
  const m = alarm.DatapointsToAlarm ?? n;
  return `${WORDS[alarm.ComparisonOperator] || alarm.ComparisonOperator} ${fmt(alarm.Threshold)} for ${m} of ${n} periods of ${alarm.Period ?? 60} s`;
}

/** A JSON timestamp (seconds since 1970) or an ISO one, in ms. */
const ms = (t) => (typeof t === 'number' ? t * 1000 : Date.parse(t));

async function allAlarms(api) {
  const alarms = [];
  let token;
  do {
    const page = await api.cloudwatch('DescribeAlarms', token ? { NextToken: token, MaxRecords: 100 } : { MaxRecords: 100 });
    alarms.push(...list(page.MetricAlarms));
    token = page.NextToken;
  } while (token);
  return alarms;
}

export function Alarms({ group }) {
  const { api } = useSession();
  const alarms = useData(() => allAlarms(api), [api, group], 30000);
  const rows = (alarms.data || []).filter((a) => ofGroup(a, group));
  return (
    <>
      <h2 id="alarms-title">Alarms</h2>
      <ErrorBox error={alarms.error} />
      <Loading state={alarms} what="the alarms" />
      {alarms.data && rows.length === 0 && (
        <p class="muted">No alarms (aws cloudwatch put-metric-alarm adds one; a target tracking policy has two).</p>
      )}
      {rows.length > 0 && (
        <StackTable
          labelledBy="alarms-title"
          rows={rows}
          rowKey={(a) => a.AlarmName}
          columns={[
            { header: 'Alarm', class: 'name', cell: (a) => a.AlarmName },
            {
              header: 'State',
              cell: (a) => (
                <span class={`alarm-${a.StateValue}`} title={a.StateReason}>
                  {a.StateValue}
                </span>
              ),
            },
            { header: 'Metric', cell: watched },
            { header: 'Condition', cell: condition },
          ]}
        />
      )}
      {rows
        .filter((a) => a.Namespace && a.MetricName)
        .map((a) => (
          <AlarmChart key={a.AlarmName} alarm={a} />
        ))}
    </>
  );
}

/** An alarm's metric over the last hour against its threshold. */
function AlarmChart({ alarm }) {
  const { api } = useSession();
  const statistic = alarm.Statistic || 'Average';
  const data = useData(
    () => {
      // To the end of this minute: a datapoint of this very second is in.
      const end = Math.ceil(Date.now() / 60000) * 60;
      return api.cloudwatch('GetMetricStatistics', {
        Namespace: alarm.Namespace,
        MetricName: alarm.MetricName,
        Dimensions: list(alarm.Dimensions),
        StartTime: end - 3600,
        EndTime: end,
        Period: alarm.Period ?? 60,
        Statistics: [statistic],
      });
    },
    [api, alarm.AlarmName, alarm.Namespace, alarm.MetricName, alarm.Period, statistic],
    30000,
  );
  if (!data.data) return <ErrorBox error={data.error} />;
  const points = list(data.data.Datapoints)
    .map((d) => ({ t: ms(d.Timestamp), y: d[statistic] ?? null }))
    .sort((a, b) => a.t - b.t);
  const last = points.length ? points[points.length - 1].y : null;
  const summary =
    `${alarm.AlarmName}: ${alarm.StateValue}; ` +
    (last === null ? 'no data in the last hour' : `now ${fmt(last)}`) +
    ` against its threshold ${fmt(alarm.Threshold)}`;
  return (
    <Chart
      class="alarm-chart"
      series={[{ label: alarm.MetricName, cls: 'metric', points }]}
      levels={[{ value: alarm.Threshold, label: 'threshold', cls: 'target' }]}
      marks={[]}
      caption={summary}
      captionId={`alarm-chart-${alarm.AlarmName}`}
      height={160}
    />
  );
}
