/** Attributes and event handlers of an element built by {@link h}. */
export type Attrs = Record<string, string | number | boolean | undefined | ((ev: Event) => void)>;

/** A child of {@link h}: text is always inserted as text, never parsed as HTML. */
export type Child = Node | string | number | null | undefined | false | Child[];

/**
 * Builds an element. Strings become text nodes (so data from the server can never inject markup);
 * `on*` attributes with a function become listeners; `false`/undefined attributes are left out.
 * @example h("button", { type: "button", onclick: () => go() }, "Search")
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") el.addEventListener(name.slice(2), value);
    else if (name === "value" && "value" in el) (el as HTMLInputElement).value = String(value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
}

/** Replaces the children of `el`. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

let nextId = 0;

/** A unique element id, so every input gets a real `<label for>`. */
export function uid(prefix: string): string {
  nextId += 1;
  return `${prefix}-${nextId}`;
}

/** A labelled form control: the label names it for screen readers and clicking it focuses the control. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  const id = control.id || uid("f");
  control.id = id;
  const hintEl = hint ? h("small", { id: `${id}-hint`, class: "hint" }, hint) : undefined;
  if (hintEl) control.setAttribute("aria-describedby", hintEl.id);
  return h("div", { class: "field" }, h("label", { for: id }, label), control, hintEl);
}

/** Says `text` to screen readers through the page's polite live region. */
export function announce(text: string): void {
  const live = document.getElementById("live");
  if (live) live.textContent = text;
}

/** Runs `fn` once `ms` after the last call: ResolveScope as you type, not on every key. */
export function debounce<A extends unknown[]>(fn: (...args: A) => void, ms: number): (...args: A) => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return (...args) => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

/** Non-empty trimmed lines of a textarea: one allow/deny entry or glob per line. */
export function lines(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
}

/** `1 result`, `3 results`: a count with its noun, so headings read right at one. */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
