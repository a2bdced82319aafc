// The user's credentials on each cloud (the secret goes in and is never shown back) and an SSH
// public key imported into every cloud the user has credentials for.
import { useState } from 'preact/hooks';
import { Button, Confirm, Dialog, ErrorBox, Field, Loading, useAction, useData, useSession } from './ui.jsx';

export function CredentialsView() {
  const { api } = useSession();
  const clouds = useData(async () => (await api.phantom('ListClouds')).Clouds || [], [api]);
  const [editing, setEditing] = useState(null);
  const [removing, setRemoving] = useState(null);
  return (
    <section aria-labelledby="credentials-title">
      <h1 id="credentials-title">Credentials and keys</h1>
      <p class="muted">Phantom launches your VMs on a cloud with your own credentials there.</p>
      <ErrorBox error={clouds.error} />
      <Loading state={clouds} what="clouds" />
      {clouds.data && (
        <div class="table-wrap">
          <table class="stack" role="table" aria-label="Cloud credentials">
            <thead role="rowgroup">
              <tr role="row">
                <th scope="col" role="columnheader">Cloud</th>
                <th scope="col" role="columnheader">Region</th>
                <th scope="col" role="columnheader">Zone</th>
                <th scope="col" role="columnheader">Access key ID</th>
                <th scope="col" role="columnheader">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody role="rowgroup">
              {clouds.data.map((c) => (
                <tr role="row" key={c.Name}>
                  <td role="cell" data-label="Cloud">{c.Name}</td>
                  <td role="cell" data-label="Region">{c.Region}</td>
                  <td role="cell" data-label="Zone">{c.Zone}</td>
                  <td role="cell" data-label="Access key ID">
                    {c.HasCredentials ? <code>{c.AccessKeyId || '(set)'}</code> : <span class="muted">none</span>}
                  </td>
                  <td role="cell" class="row-actions">
                    <Button kind="small" onClick={() => setEditing(c.Name)} aria-label={`Set credentials for ${c.Name}`}>
                      {c.HasCredentials ? 'Replace' : 'Set'}
                    </Button>
                    {c.HasCredentials && (
                      <Button kind="small danger" onClick={() => setRemoving(c.Name)} aria-label={`Remove credentials for ${c.Name}`}>
                        Remove
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {clouds.data && clouds.data.length === 0 && <p class="muted">No clouds are registered yet.</p>}
      {editing !== null && (
        <CredentialsDialog
          cloud={editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            clouds.reload();
          }}
        />
      )}
      {removing !== null && (
        <RemoveDialog
          cloud={removing}
          onClose={() => setRemoving(null)}
          onRemoved={() => {
            setRemoving(null);
            clouds.reload();
          }}
        />
      )}
      <ImportKey />
    </section>
  );
}

function CredentialsDialog({ cloud, onClose, onSaved }) {
  const { api } = useSession();
  const [accessKeyId, setAccessKeyId] = useState('');
  const [secret, setSecret] = useState('');
  const { run, busy, error } = useAction();
  const submit = (e) => {
    e.preventDefault();
    run(async () => {
      await api.phantom('PutCloudCredentials', { Cloud: cloud, AccessKeyId: accessKeyId.trim(), SecretAccessKey: secret });
      onSaved();
    });
  };
  return (
    <Dialog title={`Credentials for ${cloud}`} onClose={onClose}>
      <form class="form" onSubmit={submit}>
        <Field label="Cloud access key ID">
          <input value={accessKeyId} onInput={(e) => setAccessKeyId(e.target.value)} required autocomplete="off" />
        </Field>
        <Field label="Cloud secret access key" hint="Stored by Phantom, never shown again.">
          <input type="password" value={secret} onInput={(e) => setSecret(e.target.value)} required autocomplete="new-password" />
        </Field>
        <ErrorBox error={error} />
        <div class="actions">
          <Button type="submit" kind="primary" busy={busy}>
            Save credentials
          </Button>
          <Button onClick={onClose} disabled={busy}>
            Cancel
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

function RemoveDialog({ cloud, onClose, onRemoved }) {
  const { api } = useSession();
  const { run, busy, error } = useAction();
  return (
    <Confirm
      title={`Remove your credentials for ${cloud}?`}
      confirmLabel="Remove"
      busy={busy}
      error={error}
      onClose={onClose}
      onConfirm={() =>
        run(async () => {
          await api.phantom('DeleteCloudCredentials', { Cloud: cloud });
          onRemoved();
        })
      }
    >
      <p>Groups on {cloud} can no longer launch VMs there until you set credentials again.</p>
    </Confirm>
  );
}

function ImportKey() {
  const { api } = useSession();
  const [keyName, setKeyName] = useState('');
  const [material, setMaterial] = useState('');
  const [results, setResults] = useState(null);
  const { run, busy, error } = useAction();
  const submit = (e) => {
    e.preventDefault();
    run(async () => {
      setResults(null);
      const answer = await api.phantom('ImportKeyPair', { KeyName: keyName.trim(), PublicKeyMaterial: material.trim() });
      setResults(answer.Results || []);
    });
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="ssh-title">
      <h2 id="ssh-title">SSH key</h2>
      <p class="muted">Imports an OpenSSH public key into every cloud you have credentials for.</p>
      <Field label="Key name">
        <input value={keyName} onInput={(e) => setKeyName(e.target.value)} required />
      </Field>
      <Field label="Public key" hint="The line of your id_ed25519.pub or id_rsa.pub.">
        <textarea rows={3} value={material} onInput={(e) => setMaterial(e.target.value)} required placeholder="ssh-ed25519 AAAA… you@host" />
      </Field>
      <ErrorBox error={error} />
      <Button type="submit" kind="primary" busy={busy}>
        Import key
      </Button>
      {results && (
        <div class="table-wrap">
          <table class="stack" role="table" aria-label="Key import results">
            <thead role="rowgroup">
              <tr role="row">
                <th scope="col" role="columnheader">Cloud</th>
                <th scope="col" role="columnheader">Result</th>
              </tr>
            </thead>
            <tbody role="rowgroup">
              {results.map((r) => (
                <tr role="row" key={r.Cloud}>
                  <td role="cell" data-label="Cloud">{r.Cloud}</td>
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
    </form>
  );
}
