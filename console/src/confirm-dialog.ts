import { h, uid, type Child } from "./dom.js";

/** What {@link confirmDialog} shows. */
export interface ConfirmOptions {
  /** The dialog's heading, naming the action and its object ("Erase resource docs?"). */
  title: string;
  /** What goes, as the operator must read it before confirming. */
  body: Child;
  /** The confirming button's text ("Erase docs"): it names the object again, so no button says just "OK". */
  confirmLabel: string;
}

/**
 * A modal confirmation (`<dialog>` opened with showModal: the page behind is inert, Escape cancels).
 * Resolves true only when the confirming button is pressed; Cancel, Escape or closing resolves false.
 * Focus starts on Cancel, so Enter on an opened dialog never destroys anything.
 * @example if (await confirmDialog({ title: "Erase resource docs?", body, confirmLabel: "Erase docs" })) erase();
 */
export function confirmDialog(opts: ConfirmOptions): Promise<boolean> {
  return new Promise((resolve) => {
    const titleId = uid("dialog-title");
    let confirmed = false;
    const cancel = h("button", { type: "button", onclick: () => dialog.close() }, "Cancel");
    const confirm = h(
      "button",
      {
        type: "button",
        class: "danger",
        onclick: () => {
          confirmed = true;
          dialog.close();
        },
      },
      opts.confirmLabel,
    );
    const dialog = h(
      "dialog",
      { class: "confirm", "aria-labelledby": titleId },
      h("h2", { id: titleId }, opts.title),
      h("div", { class: "confirm-body" }, opts.body),
      h("div", { class: "confirm-actions" }, cancel, confirm),
    );
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(confirmed);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    cancel.focus();
  });
}
