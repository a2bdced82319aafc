// The user's credentials on each cloud (the secret goes in and is never shown back) and an SSH
// public key imported into every cloud the user has credentials for.
import { useState } from 'preact/hooks';
import { Form, FormDialog } from './form.jsx';
import { Button, ConfirmAction, ErrorBox, Loading, StackTable, useData, useOpen, useSession } from './ui.jsx';

export function CredentialsView() {
  const { api } = useSession();
  const clouds = useData(async () => (await api.phantom('ListClouds')).Clouds || [], [api]);
  const removing = useOpen(clouds.reload);
  const editing = useOpen(clouds.reload);
  return (
    <section aria-labelledby="credentials-title">
      <h1 id="credentials-title">Credentials and keys</h1>
      <p class="muted">Phantom launches your VMs on a cloud with your own credentials there.</p>
      <ErrorBox error={clouds.error} />
      <Loading state={clouds} what="clouds" />
      {clouds.data && (
        <StackTable
          label="Cloud credentials"
          rows={clouds.data}
          rowKey={(c) => c.Name}
          columns={[
            { header: 'Cloud', cell: (c) => c.Name },
            { header: 'Region', cell: (c) => c.Region },
            { header: 'Zone', cell: (c) => c.Zone },
            {
              header: 'Access key ID',
              cell: (c) => <>{c.HasCredentials ? <code>{c.AccessKeyId || '(set)'}</code> : <span class="muted">none</span>}</>,
            },
            {
              header: 'Actions',
              cell: (c) => (
                <>
                  <Button kind="small" onClick={() => editing.open(c.Name)} aria-label={`Set credentials for ${c.Name}`}>
                    {c.HasCredentials ? 'Replace' : 'Set'}
                  </Button>
                  {c.HasCredentials && (
                    <Button kind="small danger" onClick={() => removing.open(c.Name)} aria-label={`Remove credentials for ${c.Name}`}>
                      Remove
                    </Button>
                  )}
                </>
              ),
              class: 'row-actions',
              hidden: true,
            },
          ]}
        />
      )}
      {clouds.data && clouds.data.length === 0 && <p class="muted">No clouds are registered yet.</p>}
      {editing.target !== null && <CredentialsDialog cloud={editing.target} onClose={editing.close} onSaved={editing.done} />}
      {removing.target !== null && <RemoveDialog cloud={removing.target} onClose={removing.close} onRemoved={removing.done} />}
      <ImportKey />
    </section>
  );
}

function CredentialsDialog({ cloud, onClose, onSaved }) {
  const { api } = useSession();
  const fields = [
    { name: 'accessKeyId', label: 'Cloud access key ID', required: true, autocomplete: 'off' },
    {
      name: 'secret',
      label: 'Cloud secret access key',
      type: 'password',
      hint: 'Stored by Phantom, never shown again.',
      required: true,
      autocomplete: 'new-password',
    },
  ];
  const submit = async (v) => {
    await api.phantom('PutCloudCredentials', { Cloud: cloud, AccessKeyId: v.accessKeyId.trim(), SecretAccessKey: v.secret });
    onSaved();
  };
  return (
    <FormDialog
      title={`Credentials for ${cloud}`}
      onClose={onClose}
      fields={fields}
      initial={{ accessKeyId: '', secret: '' }}
      submit={submit}
      submitLabel="Save credentials"
    />
  );
}

function RemoveDialog({ cloud, onClose, onRemoved }) {
  const { api } = useSession();
  return (
    <ConfirmAction
      title={`Remove your credentials for ${cloud}?`}
      confirmLabel="Remove"
      onClose={onClose}
      action={async () => {
        await api.phantom('DeleteCloudCredentials', { Cloud: cloud });
        onRemoved();
      }}
    >
      <p>Groups on {cloud} can no longer launch VMs there until you set credentials again.</p>
    </ConfirmAction>
  );
}

function ImportKey() {
  const { api } = useSession();
  const [results, setResults] = useState(null);
  const fields = [
    { name: 'keyName', label: 'Key name', required: true },
    {
      name: 'material',
      label: 'Public key',
      type: 'textarea',
      hint: 'The line of your id_ed25519.pub or id_rsa.pub.',
      required: true,
      placeholder: 'ssh-ed25519 AAAA… you@host',
    },
  ];
  const submit = async (v) => {
    setResults(null);
    const answer = await api.phantom('ImportKeyPair', { KeyName: v.keyName.trim(), PublicKeyMaterial: v.material.trim() });
    setResults(answer.Results || []);
  };
  return (
    <section class="panel" aria-labelledby="ssh-title">
      <h2 id="ssh-title">SSH key</h2>
      <p class="muted">Imports an OpenSSH public key into every cloud you have credentials for.</p>
      <Form labelledBy="ssh-title" fields={fields} initial={{ keyName: '', material: '' }} submit={submit} submitLabel="Import key" />
      {results && (
        <div class="table-wrap">
          <table class="stack" role="table" aria-label="Key import results">
            <thead role="rowgroup">
              <tr role="row">
                <th scope="col" role="columnheader">
                  Cloud
                </th>
                <th scope="col" role="columnheader">
                  Result
                </th>
              </tr>
            </thead>
            <tbody role="rowgroup">
              {results.map((r) => (
                <tr role="row" key={r.Cloud}>
                  <td role="cell" data-label="Cloud">
                    {r.Cloud}
                  </td>
                  <td role="cell" data-label="Result">
                    {r.Error ? (
                      <ErrorBox error={{ code: r.Error.Code, message: r.Error.Message }} />
                    ) : (
                      <span>
                        Imported <code>{r.KeyName}</code> ({r.KeyFingerprint})
                      </span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {results.length === 0 && <p class="muted">You have credentials for no cloud yet.</p>}
        </div>
      )}
    </section>
  );
}
