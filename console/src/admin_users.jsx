// Administrators: Phantom's users, creating one and rotating a key (each secret shown once),
// disabling one, and each user's groups at a glance.
import { useState } from 'preact/hooks';
import { Button, Confirm, Dialog, ErrorBox, Field, Loading, time, useAction, useData, useSession } from './ui.jsx';

export function AdminUsersView() {
  const { api } = useSession();
  const users = useData(async () => (await api.phantom('ListUsers')).Users || [], [api]);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState(null);
  const [disabling, setDisabling] = useState(null);
  const [open, setOpen] = useState(null);
  const rotate = useAction();
  const rotateKey = (name) =>
    rotate.run(async () => {
      const answer = await api.phantom('RotateAccessKey', { UserName: name });
      setSecret({ title: `New access key of ${name}`, key: answer.AccessKey });
      users.reload();
    });
  return (
    <section aria-labelledby="users-title">
      <div class="title-row">
        <h1 id="users-title">Users</h1>
        <Button kind="primary" onClick={() => setCreating(true)}>
          Create user
        </Button>
      </div>
      <ErrorBox error={users.error} />
      <Loading state={users} what="users" />
      <ErrorBox error={rotate.error} />
      {users.data && (
        <div class="table-wrap">
          <table class="stack" role="table" aria-label="Users">
            <thead role="rowgroup">
              <tr role="row">
                <th scope="col" role="columnheader">User</th>
                <th scope="col" role="columnheader">Account</th>
                <th scope="col" role="columnheader">Access key ID</th>
                <th scope="col" role="columnheader">Created</th>
                <th scope="col" role="columnheader">Role</th>
                <th scope="col" role="columnheader">Status</th>
                <th scope="col" role="columnheader">Groups</th>
                <th scope="col" role="columnheader">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody role="rowgroup">
              {users.data.map((u) => (
                <tr role="row" key={u.UserName}>
                  <td role="cell" data-label="User">{u.UserName}</td>
                  <td role="cell" data-label="Account">{u.Account}</td>
                  <td role="cell" data-label="Access key ID">
                    <code>{u.AccessKeyId || '—'}</code>
                  </td>
                  <td role="cell" data-label="Created">{time(u.Created)}</td>
                  <td role="cell" data-label="Role">{u.Admin ? 'admin' : 'user'}</td>
                  <td role="cell" data-label="Status">{u.Disabled ? <span class="badge warn">disabled</span> : 'active'}</td>
                  <td role="cell" data-label="Groups">
                    <Button
                      kind="small link"
                      onClick={() => setOpen(open === u.UserName ? null : u.UserName)}
                      aria-expanded={open === u.UserName ? 'true' : 'false'}
                      aria-label={`Groups of ${u.UserName}`}
                    >
                      {u.Groups === 1 ? '1 group' : `${u.Groups ?? '?'} groups`}
                    </Button>
                  </td>
                  <td role="cell" class="row-actions">
                    <Button kind="small" busy={rotate.busy} onClick={() => rotateKey(u.UserName)} aria-label={`Rotate key of ${u.UserName}`}>
                      Rotate key
                    </Button>
                    {!u.Disabled && (
                      <Button kind="small danger" onClick={() => setDisabling(u.UserName)} aria-label={`Disable ${u.UserName}`}>
                        Disable
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {open !== null && <UserGroups key={open} name={open} />}
      {creating && (
        <CreateUserDialog
          onClose={() => setCreating(false)}
          onCreated={(answer) => {
            setCreating(false);
            setSecret({ title: `Access key of ${answer.User?.UserName}`, key: answer.AccessKey });
            users.reload();
          }}
        />
      )}
      {secret && <SecretDialog title={secret.title} accessKey={secret.key} onClose={() => setSecret(null)} />}
      {disabling !== null && (
        <DisableDialog
          name={disabling}
          onClose={() => setDisabling(null)}
          onDisabled={() => {
            setDisabling(null);
            users.reload();
          }}
        />
      )}
    </section>
  );
}

function UserGroups({ name }) {
  const { api } = useSession();
  const groups = useData(async () => (await api.phantom('DescribeUserGroups', { UserName: name })).Groups || [], [api, name]);
  return (
    <section class="panel" aria-labelledby="user-groups-title">
      <h2 id="user-groups-title">Groups of {name}</h2>
      <ErrorBox error={groups.error} />
      <Loading state={groups} what="groups" />
      {groups.data && groups.data.length === 0 && <p class="muted">No groups.</p>}
      {groups.data && groups.data.length > 0 && (
        <div class="table-wrap">
          <table class="stack" role="table" aria-label={`Groups of ${name}`}>
            <thead role="rowgroup">
              <tr role="row">
                <th scope="col" role="columnheader">Group</th>
                <th scope="col" role="columnheader">Launch configuration</th>
                <th scope="col" role="columnheader">Min</th>
                <th scope="col" role="columnheader">Max</th>
                <th scope="col" role="columnheader">Desired</th>
                <th scope="col" role="columnheader">Instances</th>
                <th scope="col" role="columnheader">In service</th>
              </tr>
            </thead>
            <tbody role="rowgroup">
              {groups.data.map((g) => (
                <tr role="row" key={g.Name}>
                  <td role="cell" data-label="Group">{g.Name}</td>
                  <td role="cell" data-label="Launch configuration">{g.LaunchConfiguration}</td>
                  <td role="cell" data-label="Min">{g.MinSize}</td>
                  <td role="cell" data-label="Max">{g.MaxSize}</td>
                  <td role="cell" data-label="Desired">{g.DesiredCapacity}</td>
                  <td role="cell" data-label="Instances">{g.Instances}</td>
                  <td role="cell" data-label="In service">{g.InService}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function CreateUserDialog({ onClose, onCreated }) {
  const { api } = useSession();
  const [name, setName] = useState('');
  const [admin, setAdmin] = useState(false);
  const { run, busy, error } = useAction();
  const submit = (e) => {
    e.preventDefault();
    run(async () => onCreated(await api.phantom('CreateUser', { UserName: name.trim(), Admin: admin })));
  };
  return (
    <Dialog title="Create user" onClose={onClose}>
      <form class="form" onSubmit={submit}>
        <Field label="User name">
          <input value={name} onInput={(e) => setName(e.target.value)} required />
        </Field>
        <label class="check">
          <input type="checkbox" checked={admin} onChange={(e) => setAdmin(e.target.checked)} />
          Administrator
        </label>
        <ErrorBox error={error} />
        <div class="actions">
          <Button type="submit" kind="primary" busy={busy}>
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

/** A new key's secret, shown this once. */
function SecretDialog({ title, accessKey, onClose }) {
  return (
    <Dialog title={title} onClose={onClose}>
      <p>
        <strong>Copy the secret now:</strong> it is shown only this once.
      </p>
      <dl class="secret">
        <dt>Access key ID</dt>
        <dd>
          <code data-testid="new-access-key-id">{accessKey?.AccessKeyId}</code>
        </dd>
        <dt>Secret access key</dt>
        <dd>
          <code data-testid="new-secret-access-key">{accessKey?.SecretAccessKey}</code>
        </dd>
      </dl>
      <div class="actions">
        <Button kind="primary" onClick={onClose}>
          Done
        </Button>
      </div>
    </Dialog>
  );
}

function DisableDialog({ name, onClose, onDisabled }) {
  const { api } = useSession();
  const { run, busy, error } = useAction();
  return (
    <Confirm
      title={`Disable ${name}?`}
      confirmLabel="Disable"
      busy={busy}
      error={error}
      onClose={onClose}
      onConfirm={() =>
        run(async () => {
          await api.phantom('DisableUser', { UserName: name });
          onDisabled();
        })
      }
    >
      <p>Their key stops working within 30 seconds; their groups and VMs stay. Rotating the key enables them again.</p>
    </Confirm>
  );
}
