// The console's shared building blocks: every page builds on these (docs/CONSOLE.md "Adding
// a page"). Data: useLoad, markReady. Messages: ErrorBox, Notice, outcomeNotice, AdminOnly.
// Dialogs: Dialog, ConfirmDialog. Forms: Field, describedBy, fieldErrorOf, FormError. Other:
// Badge, Menu, when. Components tied to one domain live in components/; pages never
// import each other.

import { cloneElement, isValidElement } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

// useLoad runs load() now and whenever deps change; reload() runs it again. The request
// starts right after the DOM update, before the browser paints, to save a frame.
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const seq = useRef(0);
  const run = useCallback(async () => {
    const n = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    try {
      const data = await load();
      if (n === seq.current) setState({ data, error: null, loading: false });
    } catch (error) {
      if (n === seq.current) setState({ data: null, error, loading: false });
    }
  }, deps);
  useLayoutEffect(() => {
    run();
  }, [run]);
  return [state, run];
}

// markReady records that a page shows its data and accepts input (the browser test
// measures the time to this mark).
export function markReady(page) {
  document.body.dataset.ready = page;
  try {
    performance.mark('ready:' + page);
  } catch {
    /* marks are best effort */
  }
}

export function Badge({ kind, children, title }) {
  return (
    <span class={'badge badge-' + kind} title={title}>
      {children}
    </span>
  );
}

export function ErrorBox({ error, id }) {
  if (!error) return null;
  return (
    <div class="error" role="alert" id={id}>
      <strong>{error.code ? error.code + ': ' : ''}</strong>
      {error.message}
      {error.hint ? <span class="hint"> — {error.hint}</span> : null}
    </div>
  );
}

// Notice is a message about what just happened or what the page can show: kind "ok"
// (green: it worked), "warn" (amber: it worked but needs something, or this view is
// limited) or "error" (red: it failed). Only success is ever green (issue 25).
export function Notice({ children, kind = 'ok' }) {
  return (
    <p class={'notice notice-' + kind} role={kind === 'error' ? 'alert' : 'status'} data-kind={kind}>
      {children}
    </p>
  );
}

// outcomeNotice turns a write's outcome (install, add) into one message and its kind:
// a failed first connect or a failed authorization start is an error, a consent still to
// give or a warning is amber, anything else is success.
export function outcomeNotice(name, verb, out) {
  const connect = out && out.connect;
  const az = out && out.authorization;
  const parts = [`${name} was ${verb}.`];
  let kind = 'ok';
  if (az && az.status === 'authorization_required') {
    parts.push('It needs your consent at the upstream before it can be used.');
    kind = 'warn';
  }
  if (out && out.warnings && out.warnings.length) {
    parts.push('Warning: ' + out.warnings.join(' '));
    kind = 'warn';
  }
  if (az && az.status === 'failed') {
    parts.push(`Its authorization could not start: ${az.reason || 'unknown error'}`);
    kind = 'error';
  }
  if (connect && !connect.success) {
    parts.push(`Its first connect failed: ${connect.error || 'unknown error'}`);
    kind = 'error';
  }
  return { text: parts.join(' '), kind };
}

// Dialog is a modal <dialog>: the browser traps focus and closes it on Escape.
export function Dialog({ title, onClose, children, id }) {
  const ref = useRef(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    const cancel = (e) => {
      e.preventDefault();
      onClose();
    };
    d.addEventListener('cancel', cancel);
    return () => d.removeEventListener('cancel', cancel);
  }, []);
  return (
    <dialog ref={ref} aria-labelledby={id + '-title'} id={id}>
      <div class="dialog-head">
        <h2 id={id + '-title'}>{title}</h2>
        <button type="button" class="icon" aria-label="Close" onClick={onClose}>
          ×
        </button>
      </div>
      {children}
    </dialog>
  );
}

// Field is a labelled control with its validation message announced with it: a single
// control child gets aria-invalid and aria-describedby (help, then error) unless it sets
// them itself.
export function Field({ id, label, error, help, children }) {
  let control = children;
  if (isValidElement(children) && typeof children.type === 'string') {
    const extra = {};
    if (children.props['aria-describedby'] === undefined) extra['aria-describedby'] = describedBy(id, error, help);
    if (children.props['aria-invalid'] === undefined && error) extra['aria-invalid'] = 'true';
    control = cloneElement(children, extra);
  }
  return (
    <div class={'field' + (error ? ' invalid' : '')}>
      <label for={id}>{label}</label>
      {control}
      {help ? (
        <small id={id + '-help'} class="help">
          {help}
        </small>
      ) : null}
      {error ? (
        <small id={id + '-error'} class="field-error" role="alert">
          {error}
        </small>
      ) : null}
    </div>
  );
}

export function describedBy(id, error, help) {
  return [help ? id + '-help' : '', error ? id + '-error' : ''].filter(Boolean).join(' ') || undefined;
}

// fieldErrorOf places an API error on a form's field by the field the API names in the
// error envelope's details.field (shared/apperr; e.g. {"field": "url"}): fields maps the
// API's field name to the form's key, or is a function (apiField, err) → key for computed
// names such as "variables.region". It answers {key: message (— hint)}, or null when the
// error names no field the form has (show it whole with FormError or ErrorBox).
export function fieldErrorOf(err, fields) {
  const f = (err && err.details && err.details.field) || '';
  const key = typeof fields === 'function' ? fields(f, err) : f ? fields[f] : undefined;
  if (!key) return null;
  return { [key]: err.message + (err.hint ? ' — ' + err.hint : '') };
}

// errorText is an error as one line: "CODE: message — hint" (an ApiError), or the string.
export function errorText(err) {
  if (!err) return '';
  if (typeof err === 'string') return err;
  return (err.code ? err.code + ': ' : '') + err.message + (err.hint ? ' — ' + err.hint : '');
}

// FormError is a form's own error (not a field's): a string or an ApiError, announced.
export function FormError({ error, id }) {
  if (!error) return null;
  return (
    <p class="field-error" role="alert" id={id}>
      {errorText(error)}
    </p>
  );
}

// ConfirmDialog asks before a destructive action: children say what happens; Cancel
// closes it; the danger button (label confirm) closes it and runs onConfirm.
export function ConfirmDialog({ id, title, confirm, onCancel, onConfirm, children }) {
  return (
    <Dialog id={id} title={title} onClose={onCancel}>
      {children}
      <div class="actions">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button
          type="button"
          class="danger"
          onClick={() => {
            onCancel();
            onConfirm();
          }}
        >
          {confirm}
        </button>
      </div>
    </Dialog>
  );
}

// AdminOnly is what a page shows when the API refused its list (403): the refusal and what
// the page would show to whom. The page asks, the API decides.
export function AdminOnly({ title, error, children }) {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">{title}</h1>
      <ErrorBox error={error} />
      <Notice kind="warn">{children}</Notice>
    </section>
  );
}

// useAction runs writes for a page: it clears the last outcome, runs f, shows okText (when
// given) as a success Notice and calls after (a reload); a failure is kept as the error.
// It answers [run, message, error, setMessage].
export function useAction(after) {
  const [state, setState] = useState({ message: null, error: null });
  const run = async (f, okText) => {
    setState({ message: null, error: null });
    try {
      await f();
      if (okText) setState({ message: { text: okText, kind: 'ok' }, error: null });
      if (after) after();
    } catch (error) {
      setState({ message: null, error });
    }
  };
  const setMessage = (message) => setState({ message, error: null });
  return [run, state.message, state.error, setMessage];
}

// Menu is a button that opens a list of actions (ARIA menu button pattern).
export function Menu({ label, items, id }) {
  const [open, setOpen] = useState(false);
  const list = useRef(null);
  const btn = useRef(null);
  useLayoutEffect(() => {
    if (open && list.current) list.current.querySelector('button')?.focus();
  }, [open]);
  const close = () => {
    setOpen(false);
    btn.current?.focus();
  };
  const onKey = (e) => {
    const items = [...list.current.querySelectorAll('button')];
    const i = items.indexOf(document.activeElement);
    if (e.key === 'Escape') close();
    else if (e.key === 'ArrowDown') items[(i + 1) % items.length].focus();
    else if (e.key === 'ArrowUp') items[(i - 1 + items.length) % items.length].focus();
    else return;
    e.preventDefault();
  };
  return (
    <div class="menu">
      <button
        ref={btn}
        type="button"
        class="icon"
        id={id}
        aria-haspopup="menu"
        aria-expanded={open ? 'true' : 'false'}
        aria-label={label}
        onClick={() => setOpen(!open)}
      >
        ⋯
      </button>
      {open ? (
        <ul role="menu" ref={list} aria-labelledby={id} onKeyDown={onKey}>
          {items.map((it) => (
            <li role="none" key={it.label}>
              <button
                type="button"
                role="menuitem"
                class={it.danger ? 'danger' : ''}
                onClick={() => {
                  setOpen(false);
                  it.onSelect();
                }}
              >
                {it.label}
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

export function when(t) {
  if (!t) return 'never';
  const d = new Date(t);
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
