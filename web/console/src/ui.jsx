// Small accessible building blocks shared by the pages.

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

// Field is a labelled control with its validation message announced with it.
export function Field({ id, label, error, help, children }) {
  return (
    <div class={'field' + (error ? ' invalid' : '')}>
      <label for={id}>{label}</label>
      {children}
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
