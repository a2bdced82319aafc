// Administrators: the registered clouds (reachable now? what runs there), registering or changing
// one, removing one.
import { useState } from 'preact/hooks';
import { Button, Confirm, Dialog, ErrorBox, Field, Loading, useAction, useData, useSession } from './ui.jsx';

const yesNo = (value) => (value ? 'yes' : 'no');

export function AdminCloudsView() {
  const { api } = useSession();
  const clouds = useData(async () => (await api.phantom('DescribeClouds')).Clouds || [], [api], 10000);
  const [editing, setEditing] = useState(null);
  const [removing, setRemoving] = useState(null);
  return (
    <section aria-labelledby="clouds-title">
      <div class="title-row">
        <h1 id="clouds-title">Clouds</h1>
        <Button kind="primary" onClick={() => setEditing({})}>
          Register cloud
        </Button>
      </div>
      <ErrorBox error={clouds.error} />
      <Loading state={clouds} what="clouds" />
      {clouds.data && clouds.data.length === 0 && <p class="muted">No clouds registered.</p>}
      {clouds.data && clouds.data.length > 0 && (
        <div class="table-wrap">
          <table class="stack" role="table" aria-label="Clouds">
            <thead role="rowgroup">
              <tr role="row">
                <th scope="col" role="columnheader">Name</th>
                <th scope="col" role="columnheader">Endpoint</th>
                <th scope="col" role="columnheader">Region</th>
                <th scope="col" role="columnheader">Zone</th>
                <th scope="col" role="columnheader">Reachable</th>
                <th scope="col" role="columnheader">Groups</th>
                <th scope="col" role="columnheader">Instances</th>
                <th scope="col" role="columnheader">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody role="rowgroup">
              {clouds.data.map((c) => (
                <tr role="row" key={c.Name}>
                  <td role="cell" data-label="Name">{c.Name}</td>
                  <td role="cell" data-label="Endpoint">
                    <code>{c.Endpoint}</code>
                  </td>
                  <td role="cell" data-label="Region">{c.Region}</td>
                  <td role="cell" data-label="Zone">{c.Zone}</td>
                  <td role="cell" data-label="Reachable">
                    <span class={c.Reachable ? 'health health-Healthy' : 'health health-Unhealthy'}>{yesNo(c.Reachable)}</span>
                  </td>
                  <td role="cell" data-label="Groups">{c.Groups}</td>
                  <td role="cell" data-label="Instances">{c.Instances}</td>
                  <td role="cell" class="row-actions">
                    <Button kind="small" onClick={() => setEditing(c)} aria-label={`Edit ${c.Name}`}>
                      Edit
                    </Button>
                    <Button kind="small danger" onClick={() => setRemoving(c.Name)} aria-label={`Remove ${c.Name}`}>
                      Remove
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editing !== null && (
        <CloudDialog
          cloud={editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            clouds.reload();
          }}
        />
      )}
      {removing !== null && (
        <RemoveCloud
          name={removing}
          onClose={() => setRemoving(null)}
          onRemoved={() => {
            setRemoving(null);
            clouds.reload();
          }}
        />
      )}
    </section>
  );
}

/** Registers a new cloud (`cloud` is {}) or changes one (its name fixed). */
function CloudDialog({ cloud, onClose, onSaved }) {
  const { api } = useSession();
  const existing = Boolean(cloud.Name);
  const [form, setForm] = useState({
    name: cloud.Name || '',
    endpoint: cloud.Endpoint || '',
    region: cloud.Region || '',
    zone: cloud.Zone || '',
    templates: cloud.LaunchTemplates !== false,
    balancers: cloud.LoadBalancers !== false,
    events: cloud.Events === true,
  });
  const set = (field) => (e) => setForm({ ...form, [field]: e.target.value });
  const { run, busy, error } = useAction();
  const submit = (e) => {
    e.preventDefault();
    run(async () => {
      await api.phantom('PutCloud', {
        Name: form.name.trim(),
        Endpoint: form.endpoint.trim(),
        Region: form.region.trim(),
        Zone: form.zone.trim() || undefined,
        LaunchTemplates: form.templates,
        LoadBalancers: form.balancers,
        Events: form.events,
      });
      onSaved();
    });
  };
  return (
    <Dialog title={existing ? `Edit cloud ${cloud.Name}` : 'Register cloud'} onClose={onClose}>
      <form class="form" onSubmit={submit}>
        <Field label="Cloud name" hint="Launch configurations name it after @ (web@NAME).">
          <input value={form.name} onInput={set('name')} required readOnly={existing} />
        </Field>
        <Field label="EC2 endpoint">
          <input type="url" value={form.endpoint} onInput={set('endpoint')} required placeholder="https://ec2.cloud.example:8443" />
        </Field>
        <div class="row">
          <Field label="Cloud region">
            <input value={form.region} onInput={set('region')} required placeholder="us-east-1" />
          </Field>
          <Field label="Zone" hint="Empty: the region + a.">
            <input value={form.zone} onInput={set('zone')} />
          </Field>
        </div>
        <label class="check">
          <input type="checkbox" checked={form.templates} onChange={(e) => setForm({ ...form, templates: e.target.checked })} />
          Takes launch templates
        </label>
        <label class="check">
          <input type="checkbox" checked={form.balancers} onChange={(e) => setForm({ ...form, balancers: e.target.checked })} />
          Has load balancers (ELB, ELBv2)
        </label>
        <label class="check">
          <input type="checkbox" checked={form.events} onChange={(e) => setForm({ ...form, events: e.target.checked })} />
          Sends its VMs' state changes (an AWS region whose EC2 events reach Phantom)
        </label>
        <ErrorBox error={error} />
        <div class="actions">
          <Button type="submit" kind="primary" busy={busy}>
            {existing ? 'Save cloud' : 'Register'}
          </Button>
          <Button onClick={onClose} disabled={busy}>
            Cancel
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

function RemoveCloud({ name, onClose, onRemoved }) {
  const { api } = useSession();
  const { run, busy, error } = useAction();
  return (
    <Confirm
      title={`Remove cloud ${name}?`}
      confirmLabel="Remove"
      busy={busy}
      error={error}
      onClose={onClose}
      onConfirm={() =>
        run(async () => {
          await api.phantom('DeleteCloud', { Name: name });
          onRemoved();
        })
      }
    >
      <p>Refused (ResourceInUse) while any group has VMs or launch configurations there.</p>
    </Confirm>
  );
}
