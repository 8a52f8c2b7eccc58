import { field, h, replace } from "./dom.js";
import { errorView } from "./error-view.js";
import { projectsPage } from "./pages/projects-page.js";
import { scopePage } from "./pages/scope-page.js";
import { searchPage } from "./pages/search-page.js";
import { tiersPage } from "./pages/tiers-page.js";
import { client, getKey, getScopeId, SCOPE_CHANGED, setKey, signOut } from "./session.js";

/** The console's pages by hash: the hash names a page only, nothing secret ever goes into the URL. */
const PAGES: Record<string, { title: string; render: (main: HTMLElement) => void | Promise<void> }> = {
  projects: { title: "Projects", render: projectsPage },
  scope: { title: "Scope builder", render: scopePage },
  search: { title: "Search", render: searchPage },
  tiers: { title: "Context tiers", render: tiersPage },
};

const main = document.getElementById("main")!;
const nav = document.getElementById("nav")!;
const session = document.getElementById("session")!;

function currentPage(): string {
  const name = window.location.hash.replace(/^#/, "");
  return name in PAGES ? name : "projects";
}

function render(): void {
  if (!getKey()) {
    replace(nav);
    replace(session);
    loginView();
    return;
  }
  const page = currentPage();
  replace(
    nav,
    h(
      "ul",
      {},
      Object.entries(PAGES).map(([name, p]) =>
        h("li", {}, h("a", { href: `#${name}`, "aria-current": name === page ? "page" : undefined }, p.title)),
      ),
    ),
  );
  renderSession();
  document.title = `${PAGES[page].title} · ACMS console`;
  void PAGES[page].render(main);
}

function renderSession(): void {
  const scope = getScopeId();
  replace(
    session,
    h("span", { class: "hint", id: "scope-in-use" }, scope ? h("span", {}, "scope in use ", h("code", {}, scope)) : "no scope in use"),
    " ",
    h(
      "button",
      {
        type: "button",
        onclick: () => {
          signOut();
          window.location.hash = "";
          render();
        },
      },
      "Forget key",
    ),
  );
}

function loginView(): void {
  const key = h("input", { type: "password", name: "api_key", autocomplete: "off", required: true });
  const message = h("div", { id: "login-message" });
  const form = h(
    "form",
    {
      class: "login",
      "aria-label": "Sign in",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        setKey(key.value.trim());
        try {
          await client().registry.listProjects({});
          render();
          main.focus();
        } catch (err) {
          signOut();
          replace(message, errorView(err));
        }
      },
    },
    h("h2", {}, "Sign in with your API key"),
    field("API key", key, "Kept in this tab's sessionStorage only: closing the tab forgets it."),
    h("button", { type: "submit", class: "primary" }, "Open the console"),
    message,
  );
  replace(main, form);
  key.focus();
}

window.addEventListener(SCOPE_CHANGED, renderSession);
window.addEventListener("hashchange", () => {
  render();
  main.focus();
});
render();
