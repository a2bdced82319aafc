// The user's groups, each with its VMs, refreshed every few seconds; creating a group.
import { useState } from 'preact/hooks';
import { list, queryAll } from './api.js';
import { InstancesTable, cloudOfResource } from './instances.jsx';
import { FormDialog } from './form.jsx';
import { Button, ErrorBox, Loading, useData, useOpen, useSession } from './ui.jsx';

export const REFRESH_MS = 3000;

export const groupLink = (name) => `#/groups/${encodeURIComponent(name)}`;

export function describeGroups(api, names) {
  const params = names ? { AutoScalingGroupNames: names, MaxRecords: 100 } : { MaxRecords: 100 };
  return queryAll(api, 'DescribeAutoScalingGroups', params, 'AutoScalingGroups');
}

export function tagValue(group, key) {
  return list(group.Tags).find((t) => t.Key === key)?.Value;
}

export function GroupsView() {
  const { api } = useSession();
  const groups = useData(() => describeGroups(api), [api], REFRESH_MS);
  const creating = useOpen(groups.reload);
  return (
    <section aria-labelledby="groups-title">
      <div class="title-row">
        <h1 id="groups-title">Groups</h1>
        <Button kind="primary" onClick={() => creating.open(true)}>
          Create group
        </Button>
      </div>
      <ErrorBox error={groups.error} />
      <Loading state={groups} what="groups" />
      {groups.data && groups.data.length === 0 && <p class="muted">No groups yet.</p>}
      {groups.data && groups.data.map((g) => <GroupCard key={g.AutoScalingGroupName} group={g} />)}
      {creating.target && <CreateGroupDialog onClose={creating.close} onCreated={creating.done} />}
    </section>
  );
}

function GroupCard({ group }) {
  const name = group.AutoScalingGroupName;
  const instances = list(group.Instances);
  const inService = instances.filter((i) => i.LifecycleState === 'InService').length;
  const clouds = tagValue(group, 'phantom:clouds');
  return (
    <article class="card" aria-label={`Group ${name}`}>
      <h2>
        <a href={groupLink(name)}>{name}</a>
        {group.Status && <span class="badge warn">{group.Status}</span>}
      </h2>
      <dl class="facts">
        <div>
          <dt>Desired</dt>
          <dd>{group.DesiredCapacity}</dd>
        </div>
        <div>
          <dt>Min</dt>
          <dd>{group.MinSize}</dd>
        </div>
        <div>
          <dt>Max</dt>
          <dd>{group.MaxSize}</dd>
        </div>
        <div>
          <dt>In service</dt>
          <dd>
            {inService} of {instances.length}
          </dd>
        </div>
        <div>
          <dt>Launch configuration</dt>
          <dd>{group.LaunchConfigurationName || group.LaunchTemplate?.LaunchTemplateName || '—'}</dd>
        </div>
        <div>
          <dt>Clouds</dt>
          <dd>{clouds || cloudOfResource(group)}</dd>
        </div>
      </dl>
      <InstancesTable instances={instances} label={`Instances of ${name}`} />
    </article>
  );
}

const number = (value) => (value === '' ? undefined : Number(value));

function CreateGroupDialog({ onClose, onCreated }) {
  const { api } = useSession();
  const configs = useData(() => queryAll(api, 'DescribeLaunchConfigurations', { MaxRecords: 100 }, 'LaunchConfigurations'), [api]);
  const [values, setValues] = useState({
    name: '',
    config: '',
    min: '1',
    max: '3',
    desired: '',
    clouds: '',
    policy: 'overflow',
    tagKey: '',
    tagValue: '',
  });
  const names = (configs.data || []).map((c) => c.LaunchConfigurationName);
  const config = values.config || names[0] || '';
  const size = (name, label, required, hint) => ({ name, label, type: 'number', min: '0', required, hint, row: 'size' });
  const clouds = 'Several clouds (optional)';
  const fields = [
    { name: 'name', label: 'Name', required: true, maxLength: 255 },
    { name: 'config', label: 'Launch configuration', type: 'select', required: true, options: names.map((n) => [n, n]) },
    size('min', 'Min size', true),
    size('max', 'Max size', true),
    size('desired', 'Desired capacity', false, 'Empty: the min size.'),
    {
      name: 'clouds',
      label: 'Clouds (phantom:clouds)',
      hint: 'In rank order, each with the most VMs it may hold, e.g. hotel:2,sierra:10. Each cloud needs a launch configuration of the same name there.',
      placeholder: 'hotel:2,sierra:10',
      set: clouds,
    },
    {
      name: 'policy',
      label: 'Policy (phantom:policy)',
      hint: 'overflow fills the first cloud, then the next; fixed keeps each count.',
      type: 'select',
      options: [
        ['overflow', 'overflow'],
        ['fixed', 'fixed'],
      ],
      disabled: (v) => !v.clouds.trim(),
      set: clouds,
    },
    { name: 'tagKey', label: 'Tag key', row: 'tag', set: 'Tag (optional)' },
    { name: 'tagValue', label: 'Tag value', row: 'tag', set: 'Tag (optional)' },
  ];
  const submit = async (v) => {
    const tag = (Key, Value) => ({ ResourceId: v.name, ResourceType: 'auto-scaling-group', Key, Value, PropagateAtLaunch: false });
    const tags = [];
    if (v.clouds.trim()) {
      tags.push(tag('phantom:clouds', v.clouds.trim()));
      tags.push(tag('phantom:policy', v.policy));
    }
    if (v.tagKey) tags.push(tag(v.tagKey, v.tagValue));
    await api.query('CreateAutoScalingGroup', {
      AutoScalingGroupName: v.name,
      LaunchConfigurationName: v.config,
      MinSize: number(v.min),
      MaxSize: number(v.max),
      DesiredCapacity: number(v.desired),
      Tags: tags,
    });
    onCreated(v.name);
  };
  return (
    <FormDialog
      title="Create group"
      onClose={onClose}
      fields={fields}
      values={{ ...values, config }}
      onValues={setValues}
      submit={submit}
      submitLabel="Create"
      submitDisabled={!config}
    >
      {configs.data && names.length === 0 && (
        <p class="muted">
          No launch configurations yet: <a href="#/launch-configurations">create one</a> first.
        </p>
      )}
      <ErrorBox error={configs.error} />
    </FormDialog>
  );
}
