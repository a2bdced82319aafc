// Administrators: Phantom's users, creating one and rotating a key (each secret shown once),
// disabling one, setting a user's request limits, and each user's groups at a glance.
import { useState } from 'preact/hooks';
import { FormDialog } from './form.jsx';
import { Button, ConfirmAction, Dialog, ErrorBox, Loading, StackTable, time, useAction, useData, useOpen, useSession } from './ui.jsx';

export function AdminUsersView() {
  const { api } = useSession();
  const users = useData(async () => (await api.phantom('ListUsers')).Users || [], [api]);
  const disabling = useOpen(users.reload);
  const limiting = useOpen(users.reload);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState(null);
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
        <StackTable
          label="Users"
          rows={users.data}
          rowKey={(u) => u.UserName}
          columns={[
            { header: 'User', cell: (u) => u.UserName },
            { header: 'Account', cell: (u) => u.Account },
            { header: 'Access key ID', cell: (u) => <code>{u.AccessKeyId || '—'}</code> },
            { header: 'Created', cell: (u) => time(u.Created) },
            { header: 'Role', cell: (u) => (u.Admin ? 'admin' : 'user') },
            { header: 'Status', cell: (u) => (u.Disabled ? <span class="badge warn">disabled</span> : 'active') },
            {
              header: 'Groups',
              cell: (u) => (
                <>
                  <Button
                    kind="small link"
                    onClick={() => setOpen(open === u.UserName ? null : u.UserName)}
                    aria-expanded={open === u.UserName ? 'true' : 'false'}
                    aria-label={`Groups of ${u.UserName}`}
                  >
                    {u.Groups === 1 ? '1 group' : `${u.Groups ?? '?'} groups`}
                  </Button>
                </>
              ),
            },
            { header: 'Request limits', cell: (u) => <Limits limits={u.Limits} /> },
            {
              header: 'Actions',
              cell: (u) => (
                <>
                  <Button kind="small" onClick={() => limiting.open(u)} aria-label={`Set limits of ${u.UserName}`}>
                    Limits
                  </Button>
                  <Button kind="small" busy={rotate.busy} onClick={() => rotateKey(u.UserName)} aria-label={`Rotate key of ${u.UserName}`}>
                    Rotate key
                  </Button>
                  {!u.Disabled && (
                    <Button kind="small danger" onClick={() => disabling.open(u.UserName)} aria-label={`Disable ${u.UserName}`}>
                      Disable
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
      {limiting.target !== null && <LimitsDialog user={limiting.target} onClose={limiting.close} onSaved={limiting.done} />}
      {disabling.target !== null && <DisableDialog name={disabling.target} onClose={disabling.close} onDisabled={disabling.done} />}
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
  const number = (name, label) => ({ name, label, type: 'number', min: '0', step: 'any', disabled: (v) => !v.own, required: (v) => v.own });
  const fields = [
    { name: 'own', label: "Limits of its own (unchecked: the deployment's)", type: 'checkbox' },
    number('describeRate', 'Describing calls a second'),
    number('describeBurst', 'Describing calls at once'),
    number('mutateRate', 'Changing calls a second'),
    number('mutateBurst', 'Changing calls at once'),
  ];
  const initial = {
    own: Boolean(start?.Own),
    describeRate: String(start?.Describe.Rate ?? ''),
    describeBurst: String(start?.Describe.Burst ?? ''),
    mutateRate: String(start?.Mutate.Rate ?? ''),
    mutateBurst: String(start?.Mutate.Burst ?? ''),
  };
  const submit = async (v) => {
    const input = { UserName: user.UserName };
    if (v.own) {
      input.Describe = { Rate: Number(v.describeRate), Burst: Number(v.describeBurst) };
      input.Mutate = { Rate: Number(v.mutateRate), Burst: Number(v.mutateBurst) };
    }
    await api.phantom('PutUserLimits', input);
    onSaved();
  };
  return (
    <FormDialog
      title={`Request limits of ${user.UserName}`}
      onClose={onClose}
      fields={fields}
      initial={initial}
      submit={submit}
      submitLabel="Save limits"
    >
      <p class="muted">A call over its limit is answered Throttling, which the AWS CLI and SDKs retry.</p>
    </FormDialog>
  );
}

const GROUP_COLUMNS = [
  ['Group', 'Name'],
  ['Launch configuration', 'LaunchConfiguration'],
  ['Min', 'MinSize'],
  ['Max', 'MaxSize'],
  ['Desired', 'DesiredCapacity'],
  ['Instances', 'Instances'],
  ['In service', 'InService'],
].map(([header, field]) => ({ header, cell: (g) => g[field] }));

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
        <StackTable label={`Groups of ${name}`} columns={GROUP_COLUMNS} rows={groups.data} rowKey={(g) => g.Name} />
      )}
    </section>
  );
}

function CreateUserDialog({ onClose, onCreated }) {
  const { api } = useSession();
  const fields = [
    { name: 'name', label: 'User name', required: true },
    { name: 'admin', label: 'Administrator', type: 'checkbox' },
  ];
  const submit = async (v) => onCreated(await api.phantom('CreateUser', { UserName: v.name.trim(), Admin: v.admin }));
  return (
    <FormDialog
      title="Create user"
      onClose={onClose}
      fields={fields}
      initial={{ name: '', admin: false }}
      submit={submit}
      submitLabel="Create"
    />
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
  return (
    <ConfirmAction
      title={`Disable ${name}?`}
      confirmLabel="Disable"
      onClose={onClose}
      action={async () => {
        await api.phantom('DisableUser', { UserName: name });
        onDisabled();
      }}
    >
      <p>Their key stops working within 30 seconds; their groups and VMs stay. Rotating the key enables them again.</p>
    </ConfirmAction>
  );
}
