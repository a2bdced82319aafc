// The console's small building blocks: errors as the API gave them, buttons that show work in
// progress, labelled fields, modal dialogs, and data that refreshes itself.
import { cloneElement, createContext } from 'preact';
import { useCallback, useContext, useEffect, useId, useRef, useState } from 'preact/hooks';

/** `{api, identity}` of the signed-in user (see app.jsx). */
export const Session = createContext(null);
export const useSession = () => useContext(Session);

/** An API error, Code and Message as given; any other error by its message. */
export function ErrorBox({ error, onRetry }) {
  if (!error) return null;
  return (
    <div class="error" role="alert">
      <strong class="error-code">{error.code || 'Error'}</strong>
      <span class="error-message">{error.message}</span>
      {onRetry && (
        <button type="button" class="small" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

/** Runs one operation at a time: `busy` while it runs, `error` if it failed. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const run = useCallback(async (operation) => {
    setBusy(true);
    setError(null);
    try {
      return await operation();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { run, busy, error, setError };
}

/**
 * What a dialog is open for (`target`; null while closed): `open(x)`, `close()`, and `done()`,
 * which closes it and loads the page's data again (`reload`).
 */
export function useOpen(reload) {
  const [target, setTarget] = useState(null);
  return {
    target,
    open: setTarget,
    close: () => setTarget(null),
    done: () => {
      setTarget(null);
      reload();
    },
  };
}

/** A button disabled while its work runs, with a busy mark beside its (unchanged) name. */
export function Button({ busy, children, kind = '', type = 'button', ...rest }) {
  return (
    <button type={type} class={kind} disabled={busy || rest.disabled} aria-busy={busy ? 'true' : 'false'} {...rest}>
      {children}
      {busy && <span class="spinner" aria-hidden="true" />}
    </button>
  );
}

/**
 * A label around its control, so the control is found by its label; the hint stays out of the
 * label (the control's name) and describes the control instead.
 */
export function Field({ label, hint, children }) {
  const hintId = useId();
  const control = hint ? cloneElement(children, { 'aria-describedby': hintId }) : children;
  return (
    <div class="field">
      <label>
        <span class="field-label">{label}</span>
        {control}
      </label>
      {hint && (
        <span class="hint" id={hintId} aria-live="polite">
          {hint}
        </span>
      )}
    </div>
  );
}

/** A modal dialog (the browser's own <dialog>), titled for screen readers; Escape closes it. */
export function Dialog({ title, onClose, children }) {
  const ref = useRef(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.open && dialog.close();
  }, []);
  const id = useRef(`dialog-${Math.random().toString(36).slice(2)}`).current;
  return (
    <dialog
      ref={ref}
      aria-labelledby={id}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <h2 id={id}>{title}</h2>
      {children}
    </dialog>
  );
}

/** Asks before something that cannot be undone. */
export function Confirm({ title, children, confirmLabel, onConfirm, onClose, busy, error }) {
  return (
    <Dialog title={title} onClose={onClose}>
      {children}
      <ErrorBox error={error} />
      <div class="actions">
        <Button kind="danger" busy={busy} onClick={onConfirm}>
          {confirmLabel}
        </Button>
        <Button onClick={onClose} disabled={busy}>
          Cancel
        </Button>
      </div>
    </Dialog>
  );
}

/** A Confirm whose button runs `action` (busy while it runs; its error shown). */
export function ConfirmAction({ action, ...props }) {
  const { run, busy, error } = useAction();
  return <Confirm {...props} busy={busy} error={error} onConfirm={() => run(action)} />;
}

/**
 * Data loaded at once and again every `everyMs` (if given) while the view is shown; a failed
 * refresh keeps the last data and shows the error. `reload()` loads now.
 */
export function useData(load, deps, everyMs = 0) {
  const [state, setState] = useState({ data: undefined, error: null, loading: true });
  const generation = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true }));
    try {
      const data = await load();
      if (mine === generation.current) setState({ data, error: null, loading: false });
    } catch (error) {
      if (mine === generation.current) setState((s) => ({ ...s, error, loading: false }));
    }
  }, deps);
  useEffect(() => {
    // Other inputs (a group's name, a cloud): nothing of the last ones' data stays.
    setState({ data: undefined, error: null, loading: true });
    reload();
    if (!everyMs) return undefined;
    const timer = setInterval(() => {
      if (!document.hidden) reload();
    }, everyMs);
    return () => {
      clearInterval(timer);
      generation.current++;
    };
  }, [reload, everyMs]);
  return { ...state, reload };
}

/** An ISO time as local `YYYY-MM-DD HH:MM:SS`. */
export function time(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** The cloud of a `<name>@<cloud>` launch configuration ('' without one: the default cloud). */
export function cloudOf(launchConfigurationName) {
  const at = (launchConfigurationName || '').lastIndexOf('@');
  return at >= 0 ? launchConfigurationName.slice(at + 1) : '';
}

/** Says so while data of useData() is loading for the first time. */
export function Loading({ state, what }) {
  if (state.data !== undefined || !state.loading) return null;
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

/**
 * A table that stacks into labelled rows at a phone's width (style.css `.stack`). `columns`:
 * `{ header, cell: (row) => content, class }`; the header also labels each cell, and a column
 * with `hidden` has it for screen readers only (a row's buttons). Named by `label` or by the
 * element `labelledBy` names.
 */
export function StackTable({ label, labelledBy, columns, rows, rowKey }) {
  return (
    <div class="table-wrap">
      <table class="stack" role="table" aria-label={label} aria-labelledby={labelledBy}>
        <thead role="rowgroup">
          <tr role="row">
            {columns.map((c) => (
              <th scope="col" role="columnheader" key={c.header}>
                {c.hidden ? <span class="visually-hidden">{c.header}</span> : c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody role="rowgroup">
          {rows.map((row) => (
            <tr role="row" key={rowKey(row)}>
              {columns.map((c) => (
                <td role="cell" data-label={c.header} class={c.class} key={c.header}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
