// What changes a group's size without a person: its scaling policies (listed; a simple one run by
// hand with ExecutePolicy; a metric policy's metric charted against its target) and its scheduled
// actions (listed with their next run, added, deleted).
import { useState } from 'preact/hooks';
import { list, queryAll } from './api.js';
import { MetricChart, followsMetric } from './metric_chart.jsx';
import { Button, ErrorBox, Field, Loading, StackTable, time, useAction, useData, useSession } from './ui.jsx';

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
      <Schedule group={group} onScheduled={() => { actions.reload(); onChanged(); }} />
    </>
  );
}

function Schedule({ group, onScheduled }) {
  const { api } = useSession();
  const [form, setForm] = useState({ name: '', when: 'recurring', recurrence: '', timeZone: '', at: '', desired: '', min: '', max: '' });
  const set = (key) => (e) => setForm({ ...form, [key]: e.target.value });
  const { run, busy, error } = useAction();
  const number = (v) => (v === '' ? undefined : Number(v));
  const submit = (e) => {
    e.preventDefault();
    run(async () => {
      await api.query('PutScheduledUpdateGroupAction', {
        AutoScalingGroupName: group.AutoScalingGroupName,
        ScheduledActionName: form.name,
        ...(form.when === 'recurring'
          ? { Recurrence: form.recurrence, TimeZone: form.timeZone || undefined }
          : { StartTime: isoFromLocal(form.at) }),
        DesiredCapacity: number(form.desired),
        MinSize: number(form.min),
        MaxSize: number(form.max),
      });
      setForm({ ...form, name: '', recurrence: '', at: '', desired: '', min: '', max: '' });
      onScheduled();
    });
  };
  return (
    <form class="panel" onSubmit={submit} aria-label="Schedule an action">
      <h2>Schedule an action</h2>
      <Field label="Action name">
        <input value={form.name} onInput={set('name')} required maxLength={255} />
      </Field>
      <fieldset>
        <legend>When</legend>
        <label class="check">
          <input type="radio" name="when" value="recurring" checked={form.when === 'recurring'} onChange={set('when')} />
          Repeatedly (cron)
        </label>
        <label class="check">
          <input type="radio" name="when" value="once" checked={form.when === 'once'} onChange={set('when')} />
          Once
        </label>
      </fieldset>
      {form.when === 'recurring' ? (
        <div class="row">
          <Field label="Recurrence" hint="Five fields: minute hour day month weekday, e.g. 0 9 * * 1-5">
            <input value={form.recurrence} onInput={set('recurrence')} required placeholder="0 9 * * 1-5" />
          </Field>
          <Field label="Time zone" hint="An IANA name; UTC when empty">
            <input value={form.timeZone} onInput={set('timeZone')} placeholder="Europe/Paris" />
          </Field>
        </div>
      ) : (
        <Field label="At" hint="In your browser's time zone">
          <input type="datetime-local" value={form.at} onInput={set('at')} required />
        </Field>
      )}
      <div class="row">
        <Field label="Desired">
          <input type="number" min="0" value={form.desired} onInput={set('desired')} />
        </Field>
        <Field label="Min">
          <input type="number" min="0" value={form.min} onInput={set('min')} />
        </Field>
        <Field label="Max">
          <input type="number" min="0" value={form.max} onInput={set('max')} />
        </Field>
      </div>
      <ErrorBox error={error} />
      <Button type="submit" kind="primary" busy={busy}>
        Schedule
      </Button>
    </form>
  );
}
