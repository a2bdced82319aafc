// The account's IAM users (IAM's API at Phantom's endpoint): each with its keys (two at most, so
// a key is rotated by adding the new one first) and its inline policies.
import { useState } from 'preact/hooks';
import { list } from './api.js';
import { FormDialog } from './form.jsx';
import { Button, ConfirmAction, ErrorBox, Loading, StackTable, time, useData, useOpen, useSession } from './ui.jsx';

export function AccessView() {
  const { api } = useSession();
  const users = useData(async () => list((await api.iam('ListUsers')).Users), [api]);
  const creating = useOpen(users.reload);
  const [chosen, setChosen] = useState(null);
  return (
    <section aria-labelledby="access-title">
      <h1 id="access-title">Access</h1>
      <p class="muted">
        IAM users act on this account's groups within their policies, each with keys of its own (docs/security.md).
      </p>
      <Button kind="primary" onClick={() => creating.open(true)}>
        Create IAM user
      </Button>
      <ErrorBox error={users.error} onRetry={users.reload} />
      <Loading state={users} what="IAM users" />
      {users.data && (
        <StackTable
          label="IAM users"
          rows={users.data}
          rowKey={(u) => u.UserName}
          columns={[
            { header: 'User', cell: (u) => u.UserName },
            { header: 'ARN', cell: (u) => <code>{u.Arn}</code> },
            { header: 'Created', cell: (u) => time(u.CreateDate) },
            {
              header: 'Actions',
              cell: (u) => (
                <Button kind="small" onClick={() => setChosen(u.UserName)} aria-label={`Manage ${u.UserName}`}>
                  Manage
                </Button>
              ),
              class: 'row-actions',
              hidden: true,
            },
          ]}
        />
      )}
      {users.data && users.data.length === 0 && <p class="muted">No IAM users yet.</p>}
      {creating.target !== null && <CreateUser onClose={creating.close} onCreated={creating.done} />}
      {chosen && <UserPanel key={chosen} name={chosen} onDeleted={() => (setChosen(null), users.reload())} />}
    </section>
  );
}

function CreateUser({ onClose, onCreated }) {
  const { api } = useSession();
  const fields = [{ name: 'name', label: 'User name', required: true }];
  const submit = async (v) => {
    await api.iam('CreateUser', { UserName: v.name.trim() });
    onCreated();
  };
  return <FormDialog title="Create IAM user" onClose={onClose} fields={fields} initial={{ name: '' }} submit={submit} submitLabel="Create" />;
}

function UserPanel({ name, onDeleted }) {
  const { api } = useSession();
  const keys = useData(async () => list((await api.iam('ListAccessKeys', { UserName: name })).AccessKeyMetadata), [api, name]);
  const policies = useData(async () => list((await api.iam('ListUserPolicies', { UserName: name })).PolicyNames), [api, name]);
  const [created, setCreated] = useState(null);
  const [error, setError] = useState(null);
  const putting = useOpen(policies.reload);
  const deleting = useOpen(onDeleted);
  const act = async (f) => {
    setError(null);
    try {
      await f();
    } catch (e) {
      setError(e);
    }
  };
  const newKey = () =>
    act(async () => {
      const answer = await api.iam('CreateAccessKey', { UserName: name });
      setCreated(answer.AccessKey);
      keys.reload();
    });
  const setStatus = (id, status) =>
    act(async () => {
      await api.iam('UpdateAccessKey', { UserName: name, AccessKeyId: id, Status: status });
      keys.reload();
    });
  const removeKey = (id) =>
    act(async () => {
      await api.iam('DeleteAccessKey', { UserName: name, AccessKeyId: id });
      keys.reload();
    });
  const removePolicy = (policy) =>
    act(async () => {
      await api.iam('DeleteUserPolicy', { UserName: name, PolicyName: policy });
      policies.reload();
    });
  return (
    <section class="panel" aria-labelledby="iam-user-title">
      <h2 id="iam-user-title">{name}</h2>
      <ErrorBox error={error || keys.error || policies.error} />
      <h3>Access keys</h3>
      {keys.data && (
        <StackTable
          label={`Access keys of ${name}`}
          rows={keys.data}
          rowKey={(k) => k.AccessKeyId}
          columns={[
            { header: 'Access key ID', cell: (k) => <code>{k.AccessKeyId}</code> },
            { header: 'Status', cell: (k) => k.Status },
            { header: 'Created', cell: (k) => time(k.CreateDate) },
            {
              header: 'Actions',
              cell: (k) => (
                <>
                  <Button kind="small" onClick={() => setStatus(k.AccessKeyId, k.Status === 'Active' ? 'Inactive' : 'Active')}>
                    {k.Status === 'Active' ? 'Make inactive' : 'Make active'}
                  </Button>
                  <Button kind="small danger" onClick={() => removeKey(k.AccessKeyId)} aria-label={`Delete key ${k.AccessKeyId}`}>
                    Delete
                  </Button>
                </>
              ),
              class: 'row-actions',
              hidden: true,
            },
          ]}
        />
      )}
      <Button onClick={newKey} disabled={keys.data && keys.data.length >= 2}>
        Create access key
      </Button>
      {created && (
        <p role="status">
          New key <code>{created.AccessKeyId}</code>, secret <code>{created.SecretAccessKey}</code>: shown this once.
        </p>
      )}
      <h3>Inline policies</h3>
      {policies.data && (
        <ul aria-label={`Policies of ${name}`}>
          {policies.data.map((p) => (
            <li key={p}>
              {p}{' '}
              <Button kind="small danger" onClick={() => removePolicy(p)} aria-label={`Delete policy ${p}`}>
                Delete
              </Button>
            </li>
          ))}
        </ul>
      )}
      <Button onClick={() => putting.open(true)}>Put policy</Button>
      {putting.target !== null && <PutPolicy user={name} onClose={putting.close} onPut={putting.done} />}
      <Button kind="danger" onClick={() => deleting.open(true)}>
        Delete user
      </Button>
      {deleting.target !== null && (
        <ConfirmAction
          title={`Delete ${name}?`}
          confirmLabel="Delete"
          onClose={deleting.close}
          action={async () => {
            await api.iam('DeleteUser', { UserName: name });
            deleting.done();
          }}
        >
          <p>Its keys and policies must be deleted first.</p>
        </ConfirmAction>
      )}
    </section>
  );
}

function PutPolicy({ user, onClose, onPut }) {
  const { api } = useSession();
  const fields = [
    { name: 'name', label: 'Policy name', required: true },
    { name: 'document', label: 'Policy document', type: 'textarea', rows: 8, required: true },
  ];
  const submit = async (v) => {
    await api.iam('PutUserPolicy', { UserName: user, PolicyName: v.name.trim(), PolicyDocument: v.document });
    onPut();
  };
  return (
    <FormDialog title={`Put a policy on ${user}`} onClose={onClose} fields={fields} initial={{ name: '', document: '' }} submit={submit} submitLabel="Put policy" />
  );
}
