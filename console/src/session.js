// The signed-in user's key, kept in this tab's sessionStorage only (gone when the tab closes or
// on sign-out). The secret signs requests in the browser and is never sent anywhere.
const KEY = 'phantom.session';

/** `{accessKeyId, secretAccessKey, region, identity}` or null. */
export function loadSession() {
  try {
    const session = JSON.parse(sessionStorage.getItem(KEY));
    return session && session.accessKeyId && session.secretAccessKey ? session : null;
  } catch {
    return null;
  }
}

export function saveSession(session) {
  sessionStorage.setItem(KEY, JSON.stringify(session));
}

export function clearSession() {
  sessionStorage.removeItem(KEY);
}
