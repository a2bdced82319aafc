// The user's groups, each with its VMs, refreshed every few seconds; creating a group.
import { useState } from 'preact/hooks';
import { list, queryAll } from './api.js';
import { InstancesTable, cloudOfResource } from './instances.jsx';
import { Button, Dialog, ErrorBox, Field, Loading, useAction, useData, useSession } from './ui.jsx';

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
  const [creating, setCreating] = useState(false);
  return (
    <section aria-labelledby="groups-title">
      <div class="title-row">
        <h1 id="groups-title">Groups</h1>
        <Button kind="primary" onClick={() => setCreating(true)}>
          Create group
        </Button>
      </div>
      <ErrorBox error={groups.error} />
      <Loading state={groups} what="groups" />
      {groups.data && groups.data.length === 0 && <p class="muted">No groups yet.</p>}
      {groups.data && groups.data.map((g) => <GroupCard key={g.AutoScalingGroupName} group={g} />)}
      {creating && (
        <CreateGroupDialog
          onClose={() => setCreating(false)}
          onCreated={() => {
            setCreating(false);
            groups.reload();
          }}
        />
      )}
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
  const configs = useData(
    () => queryAll(api, 'DescribeLaunchConfigurations', { MaxRecords: 100 }, 'LaunchConfigurations'),
    [api],
  );
  const [form, setForm] = useState({
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
  const set = (field) => (e) => setForm({ ...form, [field]: e.target.value });
  const { run, busy, error } = useAction();
  const names = (configs.data || []).map((c) => c.LaunchConfigurationName);
  const config = form.config || names[0] || '';

  const submit = (e) => {
    e.preventDefault();
    run(async () => {
      const tag = (Key, Value) => ({
        ResourceId: form.name,
        ResourceType: 'auto-scaling-group',
        Key,
        Value,
        PropagateAtLaunch: false,
      });
      const tags = [];
      if (form.clouds.trim()) {
        tags.push(tag('phantom:clouds', form.clouds.trim()));
        tags.push(tag('phantom:policy', form.policy));
      }
      if (form.tagKey) tags.push(tag(form.tagKey, form.tagValue));
      await api.query('CreateAutoScalingGroup', {
        AutoScalingGroupName: form.name,
        LaunchConfigurationName: config,
        MinSize: number(form.min),
        MaxSize: number(form.max),
        DesiredCapacity: number(form.desired),
        Tags: tags,
      });
      onCreated(form.name);
    });
  };

  return (
    <Dialog title="Create group" onClose={onClose}>
      <form onSubmit={submit} class="form">
        <Field label="Name">
          <input value={form.name} onInput={set('name')} required maxLength={255} />
        </Field>
        <Field label="Launch configuration">
          <select value={config} onChange={set('config')} required>
            {names.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </Field>
        {configs.data && names.length === 0 && (
          <p class="muted">
            No launch configurations yet: <a href="#/launch-configurations">create one</a> first.
          </p>
        )}
        <ErrorBox error={configs.error} />
        <div class="row">
          <Field label="Min size">
            <input type="number" min="0" value={form.min} onInput={set('min')} required />
          </Field>
          <Field label="Max size">
            <input type="number" min="0" value={form.max} onInput={set('max')} required />
          </Field>
          <Field label="Desired capacity" hint="Empty: the min size.">
            <input type="number" min="0" value={form.desired} onInput={set('desired')} />
          </Field>
        </div>
        <fieldset>
          <legend>Several clouds (optional)</legend>
          <Field
            label="Clouds (phantom:clouds)"
            hint="In rank order, each with the most VMs it may hold, e.g. hotel:2,sierra:10. Each cloud needs a launch configuration of the same name there."
          >
            <input value={form.clouds} onInput={set('clouds')} placeholder="hotel:2,sierra:10" />
          </Field>
          <Field label="Policy (phantom:policy)" hint="overflow fills the first cloud, then the next; fixed keeps each count.">
            <select value={form.policy} onChange={set('policy')} disabled={!form.clouds.trim()}>
              <option value="overflow">overflow</option>
              <option value="fixed">fixed</option>
            </select>
          </Field>
        </fieldset>
        <fieldset>
          <legend>Tag (optional)</legend>
          <div class="row">
            <Field label="Tag key">
              <input value={form.tagKey} onInput={set('tagKey')} />
            </Field>
            <Field label="Tag value">
              <input value={form.tagValue} onInput={set('tagValue')} />
            </Field>
          </div>
        </fieldset>
        <ErrorBox error={error} />
        <div class="actions">
          <Button type="submit" kind="primary" busy={busy} disabled={!config}>
            Create
          </Button>
          <Button onClick={onClose} disabled={busy}>
            Cancel
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
