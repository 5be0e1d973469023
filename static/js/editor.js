// Source of static/vendor/editor.js (bundled by scripts/build_assets.sh).
// Progressive enhancement: the page works with the plain <textarea id="code">;
// this swaps in CodeMirror 6 and keeps the textarea in sync, so the form
// posts exactly what the editor shows.
import { basicSetup } from "codemirror";
import { EditorView, keymap } from "@codemirror/view";
import { EditorState, Prec } from "@codemirror/state";
import { indentWithTab } from "@codemirror/commands";
import { indentUnit, syntaxHighlighting } from "@codemirror/language";
import { classHighlighter } from "@lezer/highlight";
import { python } from "@codemirror/lang-python";

function starterCode() {
  const node = document.getElementById("starter-code");
  return node ? JSON.parse(node.textContent) : "";
}

function enhance(textarea) {
  const form = textarea.form;
  const label = document.querySelector('label[for="code"]');
  const submit = () => {
    if (form.requestSubmit) form.requestSubmit();
    else form.submit();
    return true;
  };

  const view = new EditorView({
    state: EditorState.create({
      doc: textarea.value,
      extensions: [
        basicSetup,
        python(),
        // Stable `tok-*` classes instead of CodeMirror's light-only palette:
        // editor.css colours them for both themes (axe checks the contrast).
        syntaxHighlighting(classHighlighter),
        indentUnit.of("    "),
        EditorState.tabSize.of(4),
        // Mod-Enter beats basicSetup's own Mod-Enter (insertBlankLine).
        Prec.highest(keymap.of([{ key: "Mod-Enter", run: submit }])),
        // Tab indents; Escape then Tab leaves the editor (CodeMirror's
        // documented escape hatch), so keyboard users are never trapped.
        keymap.of([indentWithTab]),
        // CodeMirror owns view.dom's class attribute: add ours through it.
        EditorView.editorAttributes.of({ class: "code-editor" }),
        EditorView.contentAttributes.of({
          "aria-label": (label ? label.textContent.trim() : "Code") +
            " (Python editor; Tab indents, Escape then Tab leaves, Ctrl+Enter submits)",
        }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) textarea.value = update.state.doc.toString();
        }),
      ],
    }),
  });

  // Visually hidden but still in the form (and still fillable by scripts
  // and the browser's form restore, synced into the editor below); out of
  // the tab order and the accessibility tree, where the editor replaces it.
  textarea.classList.add("visually-hidden");
  textarea.tabIndex = -1;
  textarea.setAttribute("aria-hidden", "true");
  textarea.insertAdjacentElement("afterend", view.dom);
  if (label) label.addEventListener("click", () => view.focus());
  // The textarea may have been edited before this script ran (slow network).
  // One submission per click: a second Ctrl+Enter while posting is ignored.
  let posting = false;
  form.addEventListener("submit", (event) => {
    if (posting) {
      event.preventDefault();
      return;
    }
    posting = true;
    textarea.value = view.state.doc.toString();
    const button = form.querySelector('button[type="submit"]');
    if (button) button.setAttribute("aria-busy", "true");
  });
  // Back/forward cache: a restored page must be able to submit again.
  window.addEventListener("pageshow", () => {
    posting = false;
  });

  const setValue = (text) => {
    view.dispatch({
      changes: { from: 0, to: view.state.doc.length, insert: String(text) },
    });
  };

  textarea.addEventListener("input", () => {
    if (textarea.value !== view.state.doc.toString()) setValue(textarea.value);
  });

  const reset = document.getElementById("reset-code");
  if (reset) {
    reset.hidden = false;
    reset.addEventListener("click", () => {
      if (window.confirm("Replace your code with the starter code? Your edits are lost.")) {
        setValue(starterCode());
        view.focus();
      }
    });
  }

  window.courseEditor = {
    getValue: () => view.state.doc.toString(),
    setValue,
    view,
  };
}

const textarea = document.getElementById("code");
if (textarea && textarea.form) enhance(textarea);
