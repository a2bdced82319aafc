// Launch configurations: the list, creating one on a registered cloud (its images and key pairs
// asked of that cloud), deleting one.
import { useId, useState } from 'preact/hooks';
import { queryAll } from './api.js';
import { FormDialog } from './form.jsx';
import { Button, cloudOf, ConfirmAction, ErrorBox, Loading, StackTable, time, useData, useOpen, useSession } from './ui.jsx';

/** Common EC2 instance types; clouds that emulate EC2 take these names. */
export const INSTANCE_TYPES = [
  't2.nano',
  't2.micro',
  't2.small',
  't2.medium',
  't2.large',
  't3.nano',
  't3.micro',
  't3.small',
  't3.medium',
  't3.large',
  't3.xlarge',
  'm5.large',
  'm5.xlarge',
  'm5.2xlarge',
  'c5.large',
  'c5.xlarge',
  'r5.large',
  'r5.xlarge',
];

export function LaunchConfigurationsView() {
  const { api } = useSession();
  const configs = useData(() => queryAll(api, 'DescribeLaunchConfigurations', { MaxRecords: 100 }, 'LaunchConfigurations'), [api]);
  const creating = useOpen(configs.reload);
  const deleting = useOpen(configs.reload);
  return (
    <section aria-labelledby="lc-title">
      <div class="title-row">
        <h1 id="lc-title">Launch configurations</h1>
        <Button kind="primary" onClick={() => creating.open(true)}>
          Create launch configuration
        </Button>
      </div>
      <ErrorBox error={configs.error} />
      <Loading state={configs} what="launch configurations" />
      {configs.data && configs.data.length === 0 && <p class="muted">No launch configurations yet.</p>}
      {configs.data && configs.data.length > 0 && (
        <StackTable
          label="Launch configurations"
          rows={configs.data}
          rowKey={(c) => c.LaunchConfigurationName}
          columns={[
            { header: 'Name', cell: (c) => c.LaunchConfigurationName },
            { header: 'Cloud', cell: (c) => cloudOf(c.LaunchConfigurationName) || 'default cloud' },
            { header: 'Image', cell: (c) => <code>{c.ImageId}</code> },
            { header: 'Instance type', cell: (c) => c.InstanceType },
            { header: 'Key pair', cell: (c) => c.KeyName || '—' },
            { header: 'Created', cell: (c) => time(c.CreatedTime) },
            {
              header: 'Actions',
              cell: (c) => (
                <>
                  <Button
                    kind="danger small"
                    onClick={() => deleting.open(c.LaunchConfigurationName)}
                    aria-label={`Delete ${c.LaunchConfigurationName}`}
                  >
                    Delete
                  </Button>
                </>
              ),
              hidden: true,
            },
          ]}
        />
      )}
      {creating.target && <CreateDialog onClose={creating.close} onCreated={creating.done} />}
      {deleting.target !== null && <DeleteDialog name={deleting.target} onClose={deleting.close} onDeleted={deleting.done} />}
    </section>
  );
}

function DeleteDialog({ name, onClose, onDeleted }) {
  const { api } = useSession();
  return (
    <ConfirmAction
      title={`Delete launch configuration ${name}?`}
      confirmLabel="Delete"
      onClose={onClose}
      action={async () => {
        await api.query('DeleteLaunchConfiguration', { LaunchConfigurationName: name });
        onDeleted();
      }}
    >
      <p>A launch configuration that a group uses cannot be deleted (ResourceInUse).</p>
    </ConfirmAction>
  );
}

/** What the image field says: the chosen image, or how to choose one of the cloud's (many). */
function imageHint(images, cloud, chosen, typed) {
  if (images.loading && images.data === undefined) return `Asking ${cloud} for its images…`;
  if (images.error) return `${cloud} could not list its images: type an image id.`;
  if (chosen) return `${chosen.Name || chosen.Description || chosen.ImageId}${chosen.Architecture ? ` (${chosen.Architecture})` : ''}`;
  if (typed.trim()) return `${cloud} does not list this image.`;
  return `${images.data?.length ?? 0} images on ${cloud}: type to search by id or name.`;
}

/** UTF-8 text as base64, as the Query API takes UserData. */
function base64(text) {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function CreateDialog({ onClose, onCreated }) {
  const { api } = useSession();
  const clouds = useData(async () => (await api.phantom('ListClouds')).Clouds || [], [api]);
  const [values, setValues] = useState({ name: '', cloud: '', image: '', type: 't2.micro', key: '', securityGroups: '', userData: '' });
  const cloudNames = (clouds.data || []).map((c) => c.Name);
  const cloud = values.cloud || (clouds.data || []).find((c) => c.HasCredentials)?.Name || cloudNames[0] || '';
  const images = useData(
    async () => (cloud ? (await api.phantom('DescribeCloudImages', { Cloud: cloud })).Images || [] : []),
    [api, cloud],
  );
  const keys = useData(
    async () => (cloud ? (await api.phantom('DescribeCloudKeyPairs', { Cloud: cloud })).KeyPairs || [] : []),
    [api, cloud],
  );
  const imageList = useId();
  const chosen = (images.data || []).find((i) => i.ImageId === values.image.trim());
  const fields = [
    { name: 'name', label: 'Name', hint: (v) => `Saved as ${v.name || 'NAME'}@${cloud || 'CLOUD'}.`, required: true, maxLength: 200 },
    {
      name: 'cloud',
      label: 'Cloud',
      type: 'select',
      required: true,
      options: (clouds.data || []).map((c) => [c.Name, `${c.Name}${c.HasCredentials ? '' : ' (no credentials)'}`]),
      // Another cloud has other images and keys.
      also: () => ({ image: '', key: '' }),
    },
    {
      name: 'image',
      label: 'Image',
      hint: (v) => imageHint(images, cloud, chosen, v.image),
      required: true,
      placeholder: 'ami-…',
      autocomplete: 'off',
      list: imageList,
    },
    { name: 'type', label: 'Instance type', type: 'select', options: INSTANCE_TYPES.map((t) => [t, t]), row: 'type' },
    {
      name: 'key',
      label: 'Key pair',
      type: 'select',
      options: [['', '(none)'], ...(keys.data || []).map((k) => [k.KeyName, k.KeyName])],
      row: 'type',
    },
    { name: 'securityGroups', label: 'Security groups', hint: 'Ids or names, separated by commas (optional).' },
    { name: 'userData', label: 'User data', type: 'textarea', hint: 'Optional; sent base64-encoded.' },
  ];
  const submit = async (v) => {
    const groups = v.securityGroups
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    await api.query('CreateLaunchConfiguration', {
      LaunchConfigurationName: `${v.name}@${cloud}`,
      ImageId: v.image.trim(),
      InstanceType: v.type,
      KeyName: v.key || undefined,
      SecurityGroups: groups,
      UserData: v.userData ? base64(v.userData) : undefined,
    });
    onCreated();
  };
  return (
    <FormDialog
      title="Create launch configuration"
      onClose={onClose}
      fields={fields}
      values={{ ...values, cloud }}
      onValues={setValues}
      submit={submit}
      submitLabel="Create"
      submitDisabled={!cloud}
    >
      <datalist id={imageList}>
        {(images.data || []).map((i) => (
          <option key={i.ImageId} value={i.ImageId}>
            {i.Name || i.Description}
          </option>
        ))}
      </datalist>
      <ErrorBox error={clouds.error} onRetry={clouds.reload} />
      <ErrorBox error={images.error} onRetry={images.reload} />
      <ErrorBox error={keys.error} onRetry={keys.reload} />
    </FormDialog>
  );
}
