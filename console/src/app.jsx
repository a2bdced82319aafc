// The page: sign-in, or the signed-in user's header, navigation and the view the address names.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { client } from './api.js';
import { clearSession, loadSession, saveSession } from './session.js';
import { Button, ErrorBox, Field, Session, useAction } from './ui.jsx';
import { GroupsView } from './groups.jsx';
import { GroupView } from './group.jsx';
import { LaunchConfigurationsView } from './launch_configurations.jsx';
import { CredentialsView } from './credentials.jsx';
import { AdminCloudsView } from './admin_clouds.jsx';
import { AdminOperationsView } from './admin_operations.jsx';
import { AdminUsersView } from './admin_users.jsx';
import { AccessView } from './access.jsx';
import { TrailView } from './trail.jsx';

/** `#/groups/web` -> ['groups', 'web'] (each part decoded). */
function useRoute() {
  const read = () =>
    window.location.hash
      .replace(/^#\/?/, '')
      .split('/')
      .filter(Boolean)
      .map((part) => decodeURIComponent(part));
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const changed = () => setRoute(read());
    window.addEventListener('hashchange', changed);
    // The address may have changed between the first render and now, with no one listening.
    changed();
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return route;
}

export function App() {
  const [session, setSession] = useState(loadSession);
  const api = useMemo(() => session && client(session), [session]);
  if (!session) {
    return (
      <SignIn
        onSignedIn={(s) => {
          saveSession(s);
          setSession(s);
        }}
      />
    );
  }
  const signOut = () => {
    clearSession();
    setSession(null);
    window.location.hash = '';
  };
  return (
    <Session.Provider value={{ api, identity: session.identity }}>
      <Shell identity={session.identity} region={session.region} onSignOut={signOut} />
    </Session.Provider>
  );
}

function SignIn({ onSignedIn }) {
  const [accessKeyId, setAccessKeyId] = useState('');
  const [secretAccessKey, setSecret] = useState('');
  const [region, setRegion] = useState('us-east-1');
  const { run, busy, error } = useAction();
  const submit = (e) => {
    e.preventDefault();
    run(async () => {
      const keys = { accessKeyId: accessKeyId.trim(), secretAccessKey: secretAccessKey.trim(), region: region.trim() };
      const identity = await client(keys).phantom('GetCallerIdentity');
      onSignedIn({ ...keys, identity });
    });
  };
  return (
    <main class="signin">
      <h1>Phantom</h1>
      <form onSubmit={submit} aria-label="Sign in">
        <h2>Sign in</h2>
        <Field label="Access key ID">
          <input value={accessKeyId} onInput={(e) => setAccessKeyId(e.target.value)} required autocomplete="username" />
        </Field>
        <Field label="Secret access key" hint="Kept in this tab only; it signs requests and is never sent.">
          <input
            type="password"
            value={secretAccessKey}
            onInput={(e) => setSecret(e.target.value)}
            required
            autocomplete="current-password"
          />
        </Field>
        <Field label="Region">
          <input value={region} onInput={(e) => setRegion(e.target.value)} required />
        </Field>
        <ErrorBox error={error} />
        <Button type="submit" kind="primary" busy={busy}>
          Sign in
        </Button>
      </form>
    </main>
  );
}

const USER_VIEWS = [
  ['groups', 'Groups'],
  ['launch-configurations', 'Launch configurations'],
  ['credentials', 'Credentials and keys'],
  ['access', 'Access'],
  ['trail', 'Trail'],
];
const ADMIN_VIEWS = [
  ['admin/clouds', 'Clouds'],
  ['admin/users', 'Users'],
  ['admin/operations', 'Operations'],
];

function Shell({ identity, region, onSignOut }) {
  const route = useRoute();
  const admin = identity.Admin === true;
  const current = route.join('/') || 'groups';
  const link = ([path, label]) => (
    <li key={path}>
      <a href={`#/${path}`} aria-current={current === path || current.startsWith(`${path}/`) ? 'page' : undefined}>
        {label}
      </a>
    </li>
  );
  return (
    <div class="shell">
      <header>
        <span class="brand">Phantom</span>
        <span class="who">
          Signed in as <strong>{identity.UserName}</strong>
          {admin && <span class="badge">admin</span>} · {region}
        </span>
        <Button onClick={onSignOut}>Sign out</Button>
      </header>
      <nav aria-label="Main">
        <ul>{USER_VIEWS.map(link)}</ul>
        {admin && (
          <ul aria-label="Administration">
            <li class="nav-heading" aria-hidden="true">
              Admin
            </li>
            {ADMIN_VIEWS.map(link)}
          </ul>
        )}
      </nav>
      <main>
        <View route={route} admin={admin} />
      </main>
    </div>
  );
}

function View({ route, admin }) {
  const [first, second] = route;
  if (!first || first === 'groups') {
    return second ? <GroupView key={second} name={second} /> : <GroupsView />;
  }
  if (first === 'launch-configurations') return <LaunchConfigurationsView />;
  if (first === 'credentials') return <CredentialsView />;
  if (first === 'access') return <AccessView />;
  if (first === 'trail') return <TrailView />;
  if (first === 'admin' && admin) {
    if (second === 'clouds') return <AdminCloudsView />;
    if (second === 'users') return <AdminUsersView />;
    if (second === 'operations') return <AdminOperationsView />;
  }
  return <ErrorBox error={{ code: 'NotFound', message: `The console has no page #/${route.join('/')}.` }} />;
}
