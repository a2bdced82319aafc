// Administrators: the registered clouds (reachable now? what runs there), registering or changing
// one, removing one.
import { useState } from 'preact/hooks';
import { FormDialog } from './form.jsx';
import { Button, ConfirmAction, ErrorBox, Loading, StackTable, useData, useOpen, useSession } from './ui.jsx';

const yesNo = (value) => (value ? 'yes' : 'no');

export function AdminCloudsView() {
  const { api } = useSession();
  const clouds = useData(async () => (await api.phantom('DescribeClouds')).Clouds || [], [api], 10000);
  const removing = useOpen(clouds.reload);
  const editing = useOpen(clouds.reload);
  return (
    <section aria-labelledby="clouds-title">
      <div class="title-row">
        <h1 id="clouds-title">Clouds</h1>
        <Button kind="primary" onClick={() => editing.open({})}>
          Register cloud
        </Button>
      </div>
      <ErrorBox error={clouds.error} />
      <Loading state={clouds} what="clouds" />
      {clouds.data && clouds.data.length === 0 && <p class="muted">No clouds registered.</p>}
      {clouds.data && clouds.data.length > 0 && (
        <StackTable
          label="Clouds"
          rows={clouds.data}
          rowKey={(c) => c.Name}
          columns={[
            { header: 'Name', cell: (c) => c.Name },
            { header: 'Endpoint', cell: (c) => <code>{c.Endpoint}</code> },
            { header: 'Region', cell: (c) => c.Region },
            { header: 'Zone', cell: (c) => c.Zone },
            {
              header: 'Reachable',
              cell: (c) => <span class={c.Reachable ? 'health health-Healthy' : 'health health-Unhealthy'}>{yesNo(c.Reachable)}</span>,
            },
            {
              header: 'Status checks',
              cell: (c) => (c.StatusChecks ? 'DescribeInstanceStatus' : 'none: VMs judged by their state'),
            },
            { header: 'Groups', cell: (c) => c.Groups },
            { header: 'Instances', cell: (c) => c.Instances },
            {
              header: 'Actions',
              cell: (c) => (
                <>
                  <Button kind="small" onClick={() => editing.open(c)} aria-label={`Edit ${c.Name}`}>
                    Edit
                  </Button>
                  <Button kind="small danger" onClick={() => removing.open(c.Name)} aria-label={`Remove ${c.Name}`}>
                    Remove
                  </Button>
                </>
              ),
              class: 'row-actions',
              hidden: true,
            },
          ]}
        />
      )}
      {editing.target !== null && <CloudDialog cloud={editing.target} onClose={editing.close} onSaved={editing.done} />}
      {removing.target !== null && <RemoveCloud name={removing.target} onClose={removing.close} onRemoved={removing.done} />}
    </section>
  );
}

/** Registers a new cloud (`cloud` is {}) or changes one (its name fixed). */
function CloudDialog({ cloud, onClose, onSaved }) {
  const { api } = useSession();
  const existing = Boolean(cloud.Name);
  const fields = [
    { name: 'name', label: 'Cloud name', hint: 'Launch configurations name it after @ (web@NAME).', required: true, readOnly: existing },
    { name: 'endpoint', label: 'EC2 endpoint', type: 'url', required: true, placeholder: 'https://ec2.cloud.example:8443' },
    { name: 'region', label: 'Cloud region', required: true, placeholder: 'us-east-1', row: 'where' },
    { name: 'zone', label: 'Zone', hint: 'Empty: the region + a.', row: 'where' },
    { name: 'templates', label: 'Takes launch templates', type: 'checkbox' },
    { name: 'balancers', label: 'Has load balancers (ELB, ELBv2)', type: 'checkbox' },
    { name: 'events', label: "Sends its VMs' state changes (an AWS region whose EC2 events reach Phantom)", type: 'checkbox' },
  ];
  const initial = {
    name: cloud.Name || '',
    endpoint: cloud.Endpoint || '',
    region: cloud.Region || '',
    zone: cloud.Zone || '',
    templates: cloud.LaunchTemplates !== false,
    balancers: cloud.LoadBalancers !== false,
    events: cloud.Events === true,
  };
  const submit = async (v) => {
    await api.phantom('PutCloud', {
      Name: v.name.trim(),
      Endpoint: v.endpoint.trim(),
      Region: v.region.trim(),
      Zone: v.zone.trim() || undefined,
      LaunchTemplates: v.templates,
      LoadBalancers: v.balancers,
      Events: v.events,
    });
    onSaved();
  };
  return (
    <FormDialog
      title={existing ? `Edit cloud ${cloud.Name}` : 'Register cloud'}
      onClose={onClose}
      fields={fields}
      initial={initial}
      submit={submit}
      submitLabel={existing ? 'Save cloud' : 'Register'}
    />
  );
}

function RemoveCloud({ name, onClose, onRemoved }) {
  const { api } = useSession();
  return (
    <ConfirmAction
      title={`Remove cloud ${name}?`}
      confirmLabel="Remove"
      onClose={onClose}
      action={async () => {
        await api.phantom('DeleteCloud', { Name: name });
        onRemoved();
      }}
    >
      <p>Refused (ResourceInUse) while any group has VMs or launch configurations there.</p>
    </ConfirmAction>
  );
}
