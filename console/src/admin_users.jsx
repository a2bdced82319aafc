// Administrators: Phantom's users, creating one and rotating a key (each secret shown once),
// disabling one, setting a user's request limits, and each user's groups at a glance.
import { useState } from 'preact/hooks';
import { Button, Confirm, Dialog, ErrorBox, Field, Loading, time, useAction, useData, useSession } from './ui.jsx';

export function AdminUsersView() {
  const { api } = useSession();
  const users = useData(async () => (await api.phantom('ListUsers')).Users || [], [api]);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState(null);
  const [disabling, setDisabling] = useState(null);
  const [open, setOpen] = useState(null);
  const [limiting, setLimiting] = useState(null);
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
                <th scope="col" role="columnheader">Request limits</th>
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
                  <td role="cell" data-label="Request limits">
                    <Limits limits={u.Limits} />
                  </td>
                  <td role="cell" class="row-actions">
                    <Button kind="small" onClick={() => setLimiting(u)} aria-label={`Set limits of ${u.UserName}`}>
                      Limits
                    </Button>
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
      {limiting !== null && (
        <LimitsDialog
          user={limiting}
          onClose={() => setLimiting(null)}
          onSaved={() => {
            setLimiting(null);
            users.reload();
          }}
        />
      )}
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

/** A user's request limits: describing and changing calls, a second and at once. */
function Limits({ limits }) {
  if (!limits) return '—';
  const rate = (r) => `${r.Rate}/s, burst ${r.Burst}`;
  return (
    <span>
      describe {rate(limits.Describe)}; change {rate(limits.Mutate)}
      {limits.Own ? <span class="badge">own</span> : <span class="muted"> (default)</span>}
    </span>
  );
}

/** An administrator sets a user's own request limits, or gives them the deployment's again. */
function LimitsDialog({ user, onClose, onSaved }) {
  const { api } = useSession();
  const start = user.Limits;
  const [own, setOwn] = useState(Boolean(start?.Own));
  const [values, setValues] = useState({
    describeRate: String(start?.Describe.Rate ?? ''),
    describeBurst: String(start?.Describe.Burst ?? ''),
    mutateRate: String(start?.Mutate.Rate ?? ''),
    mutateBurst: String(start?.Mutate.Burst ?? ''),
  });
  const { run, busy, error } = useAction();
  const set = (key) => (e) => setValues({ ...values, [key]: e.target.value });
  const submit = (e) => {
    e.preventDefault();
    const input = { UserName: user.UserName };
    if (own) {
      input.Describe = { Rate: Number(values.describeRate), Burst: Number(values.describeBurst) };
      input.Mutate = { Rate: Number(values.mutateRate), Burst: Number(values.mutateBurst) };
    }
    run(async () => {
      await api.phantom('PutUserLimits', input);
      onSaved();
    });
  };
  const number = (key) => <input type="number" min="0" step="any" value={values[key]} onInput={set(key)} disabled={!own} required={own} />;
  return (
    <Dialog title={`Request limits of ${user.UserName}`} onClose={onClose}>
      <form class="form" onSubmit={submit}>
        <label class="check">
          <input type="checkbox" checked={own} onChange={(e) => setOwn(e.target.checked)} />
          Limits of its own (unchecked: the deployment's)
        </label>
        <Field label="Describing calls a second">{number('describeRate')}</Field>
        <Field label="Describing calls at once">{number('describeBurst')}</Field>
        <Field label="Changing calls a second">{number('mutateRate')}</Field>
        <Field label="Changing calls at once">{number('mutateBurst')}</Field>
        <p class="muted">A call over its limit is answered Throttling, which the AWS CLI and SDKs retry.</p>
        <ErrorBox error={error} />
        <div class="actions">
          <Button type="submit" kind="primary" busy={busy}>
            Save limits
          </Button>
          <Button onClick={onClose} disabled={busy}>
            Cancel
          </Button>
        </div>
      </form>
    </Dialog>
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
