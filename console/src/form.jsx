// The console's one form: fields from a list, the values they start from, a check of the values
// before they are sent (its message shown above the buttons), the API's error as given, and a
// submit button that is busy while the call runs. Every form of the console is one of these.
import { useState } from 'preact/hooks';
import { Button, Dialog, ErrorBox, Field, useAction } from './ui.jsx';

/**
 * A field: `name` (its key in the values), `label`, and optionally `type` (`text`, `url`,
 * `number`, `password`, `datetime-local`, `checkbox`, `select` or `radio` with `options`
 * [[value, label]], `textarea` with `rows`), `shown(values)` (left out while false), `hint`, `required`, `disabled`, `placeholder`, `readOnly`, `autocomplete`, `list`,
 * `maxLength`, `min`, `max`, `step`, `row` (fields with the same row side by side), `set` (fields
 * with the same set in a fieldset named by it), `also(values,
 * value)` (other values that change with it). `hint`, `options`, `required` and `disabled` may be
 * functions of the values.
 */
function Control({ field, values, set }) {
  const value = values[field.name];
  const on = (v) => (typeof v === 'function' ? v(values) : v);
  const common = {
    name: field.name,
    required: on(field.required),
    disabled: on(field.disabled),
    readOnly: field.readOnly,
    placeholder: field.placeholder,
    autocomplete: field.autocomplete,
    maxLength: field.maxLength,
  };
  const input = (e) => set(field, e.target.value);
  if (field.type === 'radio') {
    return (
      <fieldset>
        <legend>{field.label}</legend>
        {on(field.options).map(([v, text]) => (
          <label class="check" key={v}>
            <input type="radio" name={field.name} value={v} checked={value === v} onChange={input} />
            {text}
          </label>
        ))}
      </fieldset>
    );
  }
  if (field.type === 'checkbox') {
    return (
      <label class="check">
        <input
          type="checkbox"
          name={field.name}
          checked={value}
          disabled={common.disabled}
          onChange={(e) => set(field, e.target.checked)}
        />
        {field.label}
      </label>
    );
  }
  let control;
  if (field.type === 'select') {
    control = (
      <select {...common} value={value} onChange={input}>
        {on(field.options).map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    );
  } else if (field.type === 'textarea') {
    control = <textarea {...common} rows={field.rows || 3} value={value} onInput={input} />;
  } else {
    control = (
      <input
        {...common}
        type={field.type || 'text'}
        list={field.list}
        min={field.min}
        max={field.max}
        step={field.step}
        value={value}
        onInput={input}
      />
    );
  }
  return (
    <Field label={field.label} hint={on(field.hint)}>
      {control}
    </Field>
  );
}

/** Runs of consecutive fields with the same value of `key` (undefined for none). */
function runs(fields, key) {
  const out = [];
  for (const f of fields) {
    const last = out[out.length - 1];
    if (last && last.key === f[key]) last.fields.push(f);
    else out.push({ key: f[key], fields: [f] });
  }
  return out;
}

/** The fields in order: those sharing a `set` in a fieldset under its name, those sharing a `row`
 * side by side. */
function Fields({ fields: all, values, set }) {
  const fields = all.filter((f) => !f.shown || f.shown(values));
  const rows = (some) =>
    runs(some, 'row').map(({ key, fields: these }) =>
      key === undefined ? (
        these.map((f) => <Control key={f.name} field={f} values={values} set={set} />)
      ) : (
        <div class="row" key={key}>
          {these.map((f) => (
            <Control key={f.name} field={f} values={values} set={set} />
          ))}
        </div>
      ),
    );
  return runs(fields, 'set').map(({ key, fields: these }) =>
    key === undefined ? (
      rows(these)
    ) : (
      <fieldset key={key}>
        <legend>{key}</legend>
        {rows(these)}
      </fieldset>
    ),
  );
}

/**
 * `fields` and the `initial` values (or `values` and `onValues`, when the page reads them too); `check(values)`: a message, or nothing when they may be
 * sent; `submit(values)`: the call (async), whose error is shown as the API gave it;
 * `reset`: the values once the call succeeded (a function of the values sent, or true: the
 * initial ones); `submitLabel`
 * (`submitDisabled` while it cannot be sent); `onCancel` (a Cancel button); `label` (the
 * form's accessible name) or `labelledBy`; `heading`: shown above the fields; `children`: between
 * the fields and the buttons.
 */
export function Form(props) {
  const {
    fields,
    initial,
    check,
    submit,
    submitLabel,
    submitKind = 'primary',
    submitDisabled,
    onCancel,
    reset,
    label,
    labelledBy,
    children,
    heading,
  } = props;
  const [own, setOwn] = useState(initial);
  const values = props.values ?? own;
  const setValues = props.onValues ?? setOwn;
  const [invalid, setInvalid] = useState(null);
  const { run, busy, error } = useAction();
  const set = (field, value) => setValues({ ...values, [field.name]: value, ...(field.also ? field.also(values, value) : {}) });
  const send = (e) => {
    e.preventDefault();
    const problem = check ? check(values) : null;
    setInvalid(problem || null);
    if (problem) return;
    run(async () => {
      await submit(values);
      if (reset) setValues(reset === true ? initial : reset(values));
    });
  };
  return (
    <form class={props.class ?? 'form'} onSubmit={send} aria-label={label} aria-labelledby={labelledBy}>
      {heading}
      <Fields fields={fields} values={values} set={set} />
      {children}
      {invalid && (
        <p class="invalid" role="alert">
          {invalid}
        </p>
      )}
      <ErrorBox error={error} />
      <div class="actions">
        <Button type="submit" kind={submitKind} busy={busy} disabled={submitDisabled}>
          {submitLabel}
        </Button>
        {onCancel && (
          <Button onClick={onCancel} disabled={busy}>
            Cancel
          </Button>
        )}
      </div>
    </form>
  );
}

/** A form in a modal dialog, whose Cancel closes it. */
export function FormDialog({ title, onClose, ...form }) {
  return (
    <Dialog title={title} onClose={onClose}>
      <Form onCancel={onClose} {...form} />
    </Dialog>
  );
}
