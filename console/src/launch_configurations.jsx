// Launch configurations: the list, creating one on a registered cloud (its images and key pairs
// asked of that cloud), deleting one.
import { useId, useState } from 'preact/hooks';
import { queryAll } from './api.js';
import { Button, Confirm, Dialog, ErrorBox, Field, Loading, cloudOf, time, useAction, useData, useSession } from './ui.jsx';

/** Common EC2 instance types; clouds that emulate EC2 take these names. */
export const INSTANCE_TYPES = [
  't2.nano', 't2.micro', 't2.small', 't2.medium', 't2.large',
  't3.nano', 't3.micro', 't3.small', 't3.medium', 't3.large', 't3.xlarge',
  'm5.large', 'm5.xlarge', 'm5.2xlarge', 'c5.large', 'c5.xlarge', 'r5.large', 'r5.xlarge',
];

export function LaunchConfigurationsView() {
  const { api } = useSession();
  const configs = useData(
    () => queryAll(api, 'DescribeLaunchConfigurations', { MaxRecords: 100 }, 'LaunchConfigurations'),
    [api],
  );
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState(null);
  return (
    <section aria-labelledby="lc-title">
      <div class="title-row">
        <h1 id="lc-title">Launch configurations</h1>
        <Button kind="primary" onClick={() => setCreating(true)}>
          Create launch configuration
        </Button>
      </div>
      <ErrorBox error={configs.error} />
      <Loading state={configs} what="launch configurations" />
      {configs.data && configs.data.length === 0 && <p class="muted">No launch configurations yet.</p>}
      {configs.data && configs.data.length > 0 && (
        <div class="table-wrap">
          <table class="stack" role="table" aria-label="Launch configurations">
            <thead role="rowgroup">
              <tr role="row">
                <th scope="col" role="columnheader">Name</th>
                <th scope="col" role="columnheader">Cloud</th>
                <th scope="col" role="columnheader">Image</th>
                <th scope="col" role="columnheader">Instance type</th>
                <th scope="col" role="columnheader">Key pair</th>
                <th scope="col" role="columnheader">Created</th>
                <th scope="col" role="columnheader">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody role="rowgroup">
              {configs.data.map((c) => (
                <tr role="row" key={c.LaunchConfigurationName}>
                  <td role="cell" data-label="Name">{c.LaunchConfigurationName}</td>
                  <td role="cell" data-label="Cloud">{cloudOf(c.LaunchConfigurationName) || 'default cloud'}</td>
                  <td role="cell" data-label="Image">
                    <code>{c.ImageId}</code>
                  </td>
                  <td role="cell" data-label="Instance type">{c.InstanceType}</td>
                  <td role="cell" data-label="Key pair">{c.KeyName || '—'}</td>
                  <td role="cell" data-label="Created">{time(c.CreatedTime)}</td>
                  <td role="cell">
                    <Button kind="danger small" onClick={() => setDeleting(c.LaunchConfigurationName)} aria-label={`Delete ${c.LaunchConfigurationName}`}>
                      Delete
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {creating && (
        <CreateDialog
          onClose={() => setCreating(false)}
          onCreated={() => {
            setCreating(false);
            configs.reload();
          }}
        />
      )}
      {deleting !== null && (
        <DeleteDialog
          name={deleting}
          onClose={() => setDeleting(null)}
          onDeleted={() => {
            setDeleting(null);
            configs.reload();
          }}
        />
      )}
    </section>
  );
}

function DeleteDialog({ name, onClose, onDeleted }) {
  const { api } = useSession();
  const { run, busy, error } = useAction();
  return (
    <Confirm
      title={`Delete launch configuration ${name}?`}
      confirmLabel="Delete"
      busy={busy}
      error={error}
      onClose={onClose}
      onConfirm={() =>
        run(async () => {
          await api.query('DeleteLaunchConfiguration', { LaunchConfigurationName: name });
          onDeleted();
        })
      }
    >
      <p>A launch configuration that a group uses cannot be deleted (ResourceInUse).</p>
    </Confirm>
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
  const [form, setForm] = useState({ name: '', cloud: '', image: '', type: 't2.micro', key: '', securityGroups: '', userData: '' });
  const set = (field) => (e) => setForm({ ...form, [field]: e.target.value });
  const cloudNames = (clouds.data || []).map((c) => c.Name);
  const cloud = form.cloud || (clouds.data || []).find((c) => c.HasCredentials)?.Name || cloudNames[0] || '';
  const images = useData(
    async () => (cloud ? (await api.phantom('DescribeCloudImages', { Cloud: cloud })).Images || [] : []),
    [api, cloud],
  );
  const keys = useData(
    async () => (cloud ? (await api.phantom('DescribeCloudKeyPairs', { Cloud: cloud })).KeyPairs || [] : []),
    [api, cloud],
  );
  const imageList = useId();
  const chosen = (images.data || []).find((i) => i.ImageId === form.image.trim());
  const { run, busy, error } = useAction();
  const submit = (e) => {
    e.preventDefault();
    run(async () => {
      const groups = form.securityGroups.split(',').map((s) => s.trim()).filter(Boolean);
      await api.query('CreateLaunchConfiguration', {
        LaunchConfigurationName: `${form.name}@${cloud}`,
        ImageId: form.image.trim(),
        InstanceType: form.type,
        KeyName: form.key || undefined,
        SecurityGroups: groups,
        UserData: form.userData ? base64(form.userData) : undefined,
      });
      onCreated();
    });
  };
  return (
    <Dialog title="Create launch configuration" onClose={onClose}>
      <form class="form" onSubmit={submit}>
        <Field label="Name" hint={`Saved as ${form.name || 'NAME'}@${cloud || 'CLOUD'}.`}>
          <input value={form.name} onInput={set('name')} required maxLength={200} />
        </Field>
        <Field label="Cloud">
          <select value={cloud} onChange={(e) => setForm({ ...form, cloud: e.target.value, image: '', key: '' })} required>
            {(clouds.data || []).map((c) => (
              <option key={c.Name} value={c.Name}>
                {c.Name}
                {c.HasCredentials ? '' : ' (no credentials)'}
              </option>
            ))}
          </select>
        </Field>
        <ErrorBox error={clouds.error} onRetry={clouds.reload} />
        <Field label="Image" hint={imageHint(images, cloud, chosen, form.image)}>
          <input list={imageList} value={form.image} onInput={set('image')} required placeholder="ami-…" autocomplete="off" />
        </Field>
        <datalist id={imageList}>
          {(images.data || []).map((i) => (
            <option key={i.ImageId} value={i.ImageId}>
              {i.Name || i.Description}
            </option>
          ))}
        </datalist>
        <ErrorBox error={images.error} onRetry={images.reload} />
        <div class="row">
          <Field label="Instance type">
            <select value={form.type} onChange={set('type')}>
              {INSTANCE_TYPES.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Key pair">
            <select value={form.key} onChange={set('key')}>
              <option value="">(none)</option>
              {(keys.data || []).map((k) => (
                <option key={k.KeyName} value={k.KeyName}>
                  {k.KeyName}
                </option>
              ))}
            </select>
          </Field>
        </div>
        <ErrorBox error={keys.error} onRetry={keys.reload} />
        <Field label="Security groups" hint="Ids or names, separated by commas (optional).">
          <input value={form.securityGroups} onInput={set('securityGroups')} />
        </Field>
        <Field label="User data" hint="Optional; sent base64-encoded.">
          <textarea rows={3} value={form.userData} onInput={set('userData')} />
        </Field>
        <ErrorBox error={error} />
        <div class="actions">
          <Button type="submit" kind="primary" busy={busy} disabled={!cloud}>
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
