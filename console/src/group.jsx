// One group: its sizes, its capacity over time, tags and VMs (refreshed), resizing, its policies and schedule, deleting,
// and its scaling activities.
import { useState } from 'preact/hooks';
import { list } from './api.js';
import { REFRESH_MS, describeGroups } from './groups.jsx';
import { CapacityChart } from './capacity_chart.jsx';
import { Alarms } from './alarms.jsx';
import { Policies, ScheduledActions } from './group_automation.jsx';
import { InstancesTable, cloudOfResource } from './instances.jsx';
import { Form } from './form.jsx';
import { Button, Confirm, ErrorBox, Loading, StackTable, time, useAction, useData, useSession } from './ui.jsx';
import { TrailTable } from './trail.jsx';

export function GroupView({ name }) {
  const { api } = useSession();
  const group = useData(async () => (await describeGroups(api, [name]))[0] || null, [api, name], REFRESH_MS);
  const activities = useData(
    async () => list((await api.query('DescribeScalingActivities', { AutoScalingGroupName: name, MaxRecords: 50 })).Activities),
    [api, name],
    REFRESH_MS,
  );
  // Spot or on-demand, which Auto Scaling's answer does not say.
  const markets = useData(
    async () => {
      const answer = await api.phantom('DescribeInstanceMarkets', { AutoScalingGroupName: name });
      return Object.fromEntries((answer.Instances || []).map((i) => [i.InstanceId, i.Market]));
    },
    [api, name],
    REFRESH_MS,
  );
  // Why a VM is unhealthy (the check that failed, what it saw), which Auto Scaling's answer does
  // not say.
  const whys = useData(
    async () => {
      const answer = await api.phantom('DescribeInstanceHealth', { AutoScalingGroupName: name });
      return Object.fromEntries((answer.Instances || []).filter((i) => i.Why).map((i) => [i.InstanceId, i.Why]));
    },
    [api, name],
    REFRESH_MS,
  );
  const g = group.data;
  return (
    <section aria-labelledby="group-title">
      <p>
        <a href="#/groups">← All groups</a>
      </p>
      <h1 id="group-title">
        Group <span class="name">{name}</span>
        {g?.Status && <span class="badge warn">{g.Status}</span>}
      </h1>
      <ErrorBox error={group.error} />
      <Loading state={group} what="the group" />
      {g === null && <p role="status">This group does not exist (any more).</p>}
      {g && (
        <>
          <Summary group={g} />
          <CapacityChart group={g} activities={activities.data || []} onChanged={group.reload} />
          <h2>Instances</h2>
          <InstancesTable
            instances={list(g.Instances)}
            label={`Instances of ${name}`}
            markets={markets.data || {}}
            whys={whys.data || {}}
          />
          <Resize group={g} onChanged={group.reload} />
          <HealthChecks group={g} />
          <Tags group={g} />
          <Policies group={g} activities={activities.data || []} onChanged={group.reload} />
          <Alarms group={name} />
          <ScheduledActions group={g} onChanged={group.reload} />
          <Delete group={g} onDeleted={group.reload} />
        </>
      )}
      <h2 id="activities-title">Activity</h2>
      <ErrorBox error={activities.error} />
      <Activities activities={activities.data || []} />
      <h2 id="group-trail-title">Trail</h2>
      <TrailTable resourceName={name} label={`Trail of ${name}`} />
    </section>
  );
}

function Summary({ group }) {
  const facts = [
    ['Desired', group.DesiredCapacity],
    ['Min', group.MinSize],
    ['Max', group.MaxSize],
    ['Launch configuration', group.LaunchConfigurationName || group.LaunchTemplate?.LaunchTemplateName || '—'],
    ['Cloud', cloudOfResource(group)],
    ['Zones', list(group.AvailabilityZones).join(', ')],
    ['Created', time(group.CreatedTime)],
  ];
  return (
    <dl class="facts">
      {facts.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function Resize({ group, onChanged }) {
  const { api } = useSession();
  const name = group.AutoScalingGroupName;
  const size = (field, label, placeholder, required) => ({
    name: field,
    label,
    type: 'number',
    min: '0',
    placeholder,
    required,
    row: 'size',
  });
  const setCapacity = async (v) => {
    await api.query('SetDesiredCapacity', { AutoScalingGroupName: name, DesiredCapacity: Number(v.desired) });
    onChanged();
  };
  const setBounds = async (v) => {
    await api.query('UpdateAutoScalingGroup', {
      AutoScalingGroupName: name,
      MinSize: v.min === '' ? undefined : Number(v.min),
      MaxSize: v.max === '' ? undefined : Number(v.max),
    });
    onChanged();
  };
  return (
    <div class="panels">
      <Form
        class="panel"
        label="Set desired capacity"
        heading={<h2>Resize</h2>}
        fields={[size('desired', 'New desired capacity', group.DesiredCapacity, true)]}
        initial={{ desired: '' }}
        submit={setCapacity}
        submitLabel="Set desired capacity"
        reset
      />
      <Form
        class="panel"
        label="Change min and max"
        heading={<h2>Bounds</h2>}
        fields={[size('min', 'New min size', group.MinSize), size('max', 'New max size', group.MaxSize)]}
        initial={{ min: '', max: '' }}
        check={(v) => (v.min === '' && v.max === '' ? 'Give a new min size, a new max size or both.' : null)}
        submit={setBounds}
        submitLabel="Update min and max"
        submitKind=""
        reset
      />
    </div>
  );
}

// What judges the group's VMs beyond their state: EC2's status checks (and the EBS or load balancer
// checks its type adds), their confirmation period, and its probe or heartbeat (its tags), with the
// heartbeat URL its VMs call.
function HealthChecks({ group }) {
  const { api } = useSession();
  const tag = (key) => list(group.Tags).find((t) => t.Key === key)?.Value;
  const probe = tag('phantom:health-probe');
  const confirm = tag('phantom:status-check-confirm-seconds') ?? '120';
  const [url, setUrl] = useState(null);
  const action = useAction();
  const showUrl = () =>
    action.run(async () => {
      const answer = await api.phantom('GetHeartbeatUrl', { AutoScalingGroupName: group.AutoScalingGroupName });
      setUrl(answer.Url);
    });
  const rows = [
    { check: `Health check type ${group.HealthCheckType}`, setting: `grace period ${group.HealthCheckGracePeriod ?? 0} s` },
    { check: "EC2's status checks and scheduled events", setting: `an impairment confirmed after ${confirm} s` },
    { check: 'Probe', setting: probe || 'none (tag phantom:health-probe)' },
  ];
  return (
    <>
      <h2>Health checks</h2>
      <StackTable
        label="Health checks"
        rows={rows}
        rowKey={(r) => r.check}
        columns={[
          { header: 'Check', cell: (r) => r.check },
          { header: 'Setting', cell: (r) => r.setting },
        ]}
      />
      {probe?.startsWith('heartbeat://') && (
        <p>
          <Button kind="small" onClick={showUrl} busy={action.busy}>
            Show heartbeat URL
          </Button>{' '}
          {url && <code data-testid="heartbeat-url">{url}</code>}
        </p>
      )}
      <ErrorBox error={action.error} />
    </>
  );
}

function Tags({ group }) {
  const tags = list(group.Tags);
  if (tags.length === 0) return null;
  return (
    <>
      <h2>Tags</h2>
      <StackTable
        label="Tags"
        rows={tags}
        rowKey={(t) => t.Key}
        columns={[
          { header: 'Key', cell: (t) => t.Key },
          { header: 'Value', cell: (t) => t.Value },
          { header: 'Propagated at launch', cell: (t) => (t.PropagateAtLaunch === 'true' ? 'yes' : 'no') },
        ]}
      />
    </>
  );
}

function Delete({ group, onDeleted }) {
  const { api } = useSession();
  const name = group.AutoScalingGroupName;
  const [asking, setAsking] = useState(false);
  const [force, setForce] = useState(true);
  const { run, busy, error, setError } = useAction();
  const remove = () =>
    run(async () => {
      await api.query('DeleteAutoScalingGroup', { AutoScalingGroupName: name, ForceDelete: force ? 'true' : undefined });
      setAsking(false);
      onDeleted();
    });
  return (
    <div class="danger-zone">
      <Button kind="danger" onClick={() => setAsking(true)}>
        Delete group
      </Button>
      {asking && (
        <Confirm
          title={`Delete group ${name}?`}
          confirmLabel="Delete"
          busy={busy}
          error={error}
          onConfirm={remove}
          onClose={() => {
            setAsking(false);
            setError(null);
          }}
        >
          <label class="check">
            <input type="checkbox" checked={force} onChange={(e) => setForce(e.target.checked)} />
            Terminate its instances too (force delete)
          </label>
          <p class="muted">Without it, a group that still has instances is refused (ResourceInUse).</p>
        </Confirm>
      )}
    </div>
  );
}

function Activities({ activities }) {
  if (activities.length === 0) return <p class="muted">No activity yet.</p>;
  return (
    <StackTable
      labelledBy="activities-title"
      rows={activities}
      rowKey={(a) => a.ActivityId}
      columns={[
        { header: 'Started', class: 'nowrap', cell: (a) => time(a.StartTime) },
        {
          header: 'Status',
          cell: (a) => (
            <>
              <span class={`status nowrap status-${a.StatusCode}`}>{a.StatusCode}</span>
              {a.StatusMessage && <div class="status-message">{a.StatusMessage}</div>}
            </>
          ),
        },
        { header: 'Description', cell: (a) => a.Description },
        { header: 'Cause', cell: (a) => a.Cause },
      ]}
    />
  );
}
