// What changes a group's size without a person: its scaling policies (listed; a simple one run by
// hand with ExecutePolicy; a metric policy's metric charted against its target) and its scheduled
// actions (listed with their next run, added, deleted).
import { useState } from 'preact/hooks';
import { list, queryAll } from './api.js';
import { MetricChart, followsMetric } from './metric_chart.jsx';
import { Form } from './form.jsx';
import { Button, ErrorBox, Loading, StackTable, time, useAction, useData, useSession } from './ui.jsx';

/** A policy's change in words: "+2 instances", "-10 %", "exactly 3", or its steps. */
export function adjustment(policy) {
  if (policy.PolicyType === 'TargetTrackingScaling') return 'tracks a target';
  const steps = list(policy.StepAdjustments);
  const one = (n) => {
    const signed = Number(n) > 0 ? `+${n}` : String(n);
    switch (policy.AdjustmentType) {
      case 'ExactCapacity':
        return `exactly ${n}`;
      case 'PercentChangeInCapacity':
        return `${signed} %`;
      default:
        return `${signed} instance${Math.abs(Number(n)) === 1 ? '' : 's'}`;
    }
  };
  if (policy.PolicyType === 'StepScaling') {
    return steps
      .map((s) => {
        const lower = s.MetricIntervalLowerBound ?? '-∞';
        const upper = s.MetricIntervalUpperBound ?? '+∞';
        return `${lower} to ${upper}: ${one(s.ScalingAdjustment)}`;
      })
      .join('; ');
  }
  return one(policy.ScalingAdjustment);
}

export function Policies({ group, activities, onChanged }) {
  const { api } = useSession();
  const name = group.AutoScalingGroupName;
  const policies = useData(() => queryAll(api, 'DescribePolicies', { AutoScalingGroupName: name }, 'ScalingPolicies'), [api, name]);
  const execute = useAction();
  const [ran, setRan] = useState('');
  const run = (policy) =>
    execute.run(async () => {
      setRan('');
      // HonorCooldown: a person pressing the button twice is not a second alarm.
      await api.query('ExecutePolicy', { AutoScalingGroupName: name, PolicyName: policy, HonorCooldown: 'true' });
      setRan(policy);
      onChanged();
    });
  const rows = policies.data || [];
  return (
    <>
      <h2 id="policies-title">Scaling policies</h2>
      <ErrorBox error={policies.error} />
      <Loading state={policies} what="the policies" />
      {policies.data && rows.length === 0 && <p class="muted">No scaling policies (PutScalingPolicy adds one).</p>}
      {rows.length > 0 && (
        <StackTable
          labelledBy="policies-title"
          rows={rows}
          rowKey={(p) => p.PolicyName}
          columns={[
            { header: 'Policy', class: 'name', cell: (p) => p.PolicyName },
            { header: 'Type', cell: (p) => p.PolicyType },
            { header: 'Change', cell: adjustment },
            { header: 'Cooldown', cell: (p) => (p.Cooldown ? `${p.Cooldown} s` : 'the group\u2019s') },
            {
              header: 'Run',
              hidden: true,
              cell: (p) =>
                p.PolicyType === 'SimpleScaling' && (
                  <Button kind="small" busy={execute.busy} onClick={() => run(p.PolicyName)} aria-label={`Run policy ${p.PolicyName}`}>
                    Run now
                  </Button>
                ),
            },
          ]}
        />
      )}
      {rows.filter(followsMetric).map((p) => (
        <MetricChart key={p.PolicyName} group={name} policy={p} activities={activities} />
      ))}
      <ErrorBox error={execute.error} />
      {ran && (
        <p role="status" class="muted">
          Policy <span class="name">{ran}</span> ran.
        </p>
      )}
    </>
  );
}

/** A `datetime-local` value (the browser's zone) as the ISO time in UTC the API takes. */
export function isoFromLocal(value) {
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw new Error(`Not a time: ${value}`);
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function ScheduledActions({ group, onChanged }) {
  const { api } = useSession();
  const name = group.AutoScalingGroupName;
  const actions = useData(
    () => queryAll(api, 'DescribeScheduledActions', { AutoScalingGroupName: name }, 'ScheduledUpdateGroupActions'),
    [api, name],
    // The next run moves as actions fire.
    15000,
  );
  const remove = useAction();
  const drop = (action) =>
    remove.run(async () => {
      await api.query('DeleteScheduledAction', { AutoScalingGroupName: name, ScheduledActionName: action });
      actions.reload();
    });
  const rows = actions.data || [];
  const sizes = (a) =>
    [
      ['desired', a.DesiredCapacity],
      ['min', a.MinSize],
      ['max', a.MaxSize],
    ]
      .filter(([, v]) => v !== undefined && v !== '')
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  return (
    <>
      <h2 id="schedule-title">Scheduled actions</h2>
      <ErrorBox error={actions.error} />
      <Loading state={actions} what="the scheduled actions" />
      {actions.data && rows.length === 0 && <p class="muted">Nothing scheduled.</p>}
      {rows.length > 0 && (
        <StackTable
          labelledBy="schedule-title"
          rows={rows}
          rowKey={(a) => a.ScheduledActionName}
          columns={[
            { header: 'Action', class: 'name', cell: (a) => a.ScheduledActionName },
            { header: 'Next run', class: 'nowrap', cell: (a) => time(a.StartTime) },
            {
              header: 'Repeats',
              cell: (a) => (
                <>
                  {a.Recurrence ? `${a.Recurrence} (${a.TimeZone || 'UTC'})` : 'once'}
                  {a.EndTime && <div class="muted">until {time(a.EndTime)}</div>}
                </>
              ),
            },
            { header: 'Sets', cell: sizes },
            {
              header: 'Delete',
              hidden: true,
              cell: (a) => (
                <Button
                  kind="small"
                  busy={remove.busy}
                  onClick={() => drop(a.ScheduledActionName)}
                  aria-label={`Delete scheduled action ${a.ScheduledActionName}`}
                >
                  Delete
                </Button>
              ),
            },
          ]}
        />
      )}
      <ErrorBox error={remove.error} />
      <Schedule
        group={group}
        onScheduled={() => {
          actions.reload();
          onChanged();
        }}
      />
    </>
  );
}

function Schedule({ group, onScheduled }) {
  const { api } = useSession();
  const recurring = (v) => v.when === 'recurring';
  const size = (name, label) => ({ name, label, type: 'number', min: '0', row: 'size' });
  const fields = [
    { name: 'name', label: 'Action name', required: true, maxLength: 255 },
    {
      name: 'when',
      label: 'When',
      type: 'radio',
      options: [
        ['recurring', 'Repeatedly (cron)'],
        ['once', 'Once'],
      ],
    },
    {
      name: 'recurrence',
      label: 'Recurrence',
      hint: 'Five fields: minute hour day month weekday, e.g. 0 9 * * 1-5',
      required: true,
      placeholder: '0 9 * * 1-5',
      row: 'cron',
      shown: recurring,
    },
    {
      name: 'timeZone',
      label: 'Time zone',
      hint: 'An IANA name; UTC when empty',
      placeholder: 'Europe/Paris',
      row: 'cron',
      shown: recurring,
    },
    { name: 'at', label: 'At', type: 'datetime-local', hint: "In your browser's time zone", required: true, shown: (v) => !recurring(v) },
    size('desired', 'Desired'),
    size('min', 'Min'),
    size('max', 'Max'),
  ];
  const number = (v) => (v === '' ? undefined : Number(v));
  const submit = async (v) => {
    await api.query('PutScheduledUpdateGroupAction', {
      AutoScalingGroupName: group.AutoScalingGroupName,
      ScheduledActionName: v.name,
      ...(recurring(v) ? { Recurrence: v.recurrence, TimeZone: v.timeZone || undefined } : { StartTime: isoFromLocal(v.at) }),
      DesiredCapacity: number(v.desired),
      MinSize: number(v.min),
      MaxSize: number(v.max),
    });
    onScheduled();
  };
  return (
    <Form
      class="panel"
      label="Schedule an action"
      heading={<h2>Schedule an action</h2>}
      fields={fields}
      initial={{ name: '', when: 'recurring', recurrence: '', timeZone: '', at: '', desired: '', min: '', max: '' }}
      submit={submit}
      submitLabel="Schedule"
      reset={(v) => ({ ...v, name: '', recurrence: '', at: '', desired: '', min: '', max: '' })}
    />
  );
}
