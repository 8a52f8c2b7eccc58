import { h, replace, type Child } from "./dom.js";

/** Rows per page: a page of a large list renders in one frame. */
export const PAGE_SIZE = 50;

/**
 * Renders `items` a page at a time with Previous/Next buttons, so a long list (a project's resources,
 * a result set) never puts thousands of rows into the DOM at once. A list of one page shows no pager.
 */
export function pagedList<T>(
  items: readonly T[],
  render: (item: T, index: number) => Child,
  opts: { label: string; container?: "tbody" | "ul"; pageSize?: number },
): { body: HTMLElement; pager: HTMLElement } {
  const size = opts.pageSize ?? PAGE_SIZE;
  const pages = Math.max(1, Math.ceil(items.length / size));
  const body = h(opts.container ?? "ul", { class: opts.container === "tbody" ? "" : "plain" });
  const status = h("span", { class: "page-status", "aria-live": "polite" });
  const prev = h("button", { type: "button", onclick: () => show(page - 1) }, "Previous page");
  const next = h("button", { type: "button", onclick: () => show(page + 1) }, "Next page");
  let page = 0;
  const show = (p: number) => {
    page = Math.min(Math.max(0, p), pages - 1);
    const start = page * size;
    replace(
      body,
      items.slice(start, start + size).map((item, i) => render(item, start + i)),
    );
    status.textContent = items.length === 0 ? "nothing to show" : `${start + 1}-${Math.min(start + size, items.length)} of ${items.length}`;
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
  };
  show(0);
  const pager = h("div", { class: "pager", role: "group", "aria-label": `${opts.label} pages`, hidden: pages <= 1 }, prev, status, next);
  return { body, pager };
}
