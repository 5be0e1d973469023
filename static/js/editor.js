// Source of static/vendor/editor.js (bundled by scripts/build_assets.sh).
// Progressive enhancement: the page works with the plain <textarea id="code">
// (the exercise page), <textarea data-code-editor> (a quiz's code questions,
// the admin's Python fields) or <textarea data-code-list> (the admin's lists
// of solutions, see enhanceList); this swaps in CodeMirror 6 and keeps the textarea in sync, so
// the form posts exactly what the editor shows. Each change also fires an
// `input` event on the textarea, so a page's own script (the quiz's
// autosave) sees the editor's edits as it sees typing.
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

// An unsent draft survives a reload: it lives in localStorage under a key
// per user and exercise, tied to the attempt it was typed over (`base`), so
// a newer submission from elsewhere makes it stale instead of overriding it.
function draftStore(textarea) {
  const key = textarea.dataset.draftKey;
  const base = textarea.dataset.draftBase || "";
  const read = () => {
    try {
      const draft = JSON.parse(window.localStorage.getItem(key) || "null");
      return draft && draft.base === base && typeof draft.code === "string" ? draft : null;
    } catch (error) {
      return null; // storage refused (private mode) or a mangled entry
    }
  };
  const write = (code) => {
    try {
      window.localStorage.setItem(key, JSON.stringify({ base, code, saved: Date.now() }));
    } catch (error) {
      // Full or refused: the draft is only a convenience.
    }
  };
  const clear = () => {
    try {
      window.localStorage.removeItem(key);
    } catch (error) {
      // nothing to do
    }
  };
  return key ? { read, write, clear } : null;
}

// `exercise`: the exercise page's extras (Ctrl+Enter submits, one post per
// click, draft restore, the reset button, window.courseEditor). A quiz's
// editors have none of them: the quiz page saves and submits by itself.
function enhance(textarea, { exercise = false } = {}) {
  const form = textarea.form;
  const label = textarea.id ? document.querySelector('label[for="' + textarea.id + '"]') : null;
  const described = textarea.getAttribute("aria-describedby");
  const submit = () => {
    if (form.requestSubmit) form.requestSubmit();
    else form.submit();
    return true;
  };

  const drafts = draftStore(textarea);
  const serverCode = textarea.value; // the last attempt, or the starter
  let draftTimer = null;
  const saveDraft = () => {
    if (!drafts) return;
    clearTimeout(draftTimer);
    draftTimer = setTimeout(() => {
      if (textarea.value === serverCode) drafts.clear();
      else drafts.write(textarea.value);
    }, 250);
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
        exercise ? Prec.highest(keymap.of([{ key: "Mod-Enter", run: submit }])) : [],
        // Tab indents; Escape then Tab leaves the editor (CodeMirror's
        // documented escape hatch), so keyboard users are never trapped.
        keymap.of([indentWithTab]),
        // CodeMirror owns view.dom's class attribute: add ours through it.
        EditorView.editorAttributes.of({ class: "code-editor" }),
        EditorView.contentAttributes.of({
          "aria-label": (label ? label.textContent.trim() : "Code") +
            (exercise
              ? " (Python editor; Tab indents, Escape then Tab leaves, Ctrl+Enter submits)"
              : " (Python editor; Tab indents, Escape then Tab leaves)"),
          ...(described ? { "aria-describedby": described } : {}),
        }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) {
            textarea.value = update.state.doc.toString();
            textarea.dispatchEvent(new Event("input", { bubbles: true }));
            saveDraft();
          }
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
  // Long lines scroll sideways inside .cm-scroller on a phone. A scroll
  // region needs a keyboard stop of its own (WCAG 2.1.1, axe's
  // scrollable-region-focusable): there the arrow keys scroll, and the next
  // Tab enters the editor. CodeMirror creates it with tabindex -1 and never
  // sets it again.
  view.scrollDOM.tabIndex = 0;
  view.scrollDOM.setAttribute("role", "region");
  view.scrollDOM.setAttribute(
    "aria-label",
    (label ? label.textContent.trim() : "Code") + " (scroll area; Tab again to type)",
  );
  // The label's own activation would focus the hidden textarea after this.
  if (label) {
    label.addEventListener("click", (event) => {
      event.preventDefault();
      view.focus();
    });
  }
  // The textarea may have been edited before this script ran (slow network).
  // One submission per click: a second Ctrl+Enter while posting is ignored.
  let posting = false;
  form.addEventListener("submit", (event) => {
    if (!exercise) {
      textarea.value = view.state.doc.toString();
      return;
    }
    if (posting) {
      event.preventDefault();
      return;
    }
    posting = true;
    textarea.value = view.state.doc.toString();
    // Sent: no longer a draft (a refused post re-renders it in the form).
    clearTimeout(draftTimer);
    if (drafts) drafts.clear();
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
  if (!exercise) return;

  const restored = drafts && drafts.read();
  const status = document.getElementById("draft-status");
  if (restored && restored.code !== textarea.value) {
    setValue(restored.code);
    if (status) {
      const when = new Date(restored.saved).toLocaleTimeString([], {
        hour: "2-digit",
        minute: "2-digit",
      });
      status.textContent = "Restored your unsent draft (saved " + when + "). ";
      const discard = document.createElement("button");
      discard.type = "button";
      discard.className = "secondary";
      discard.id = "discard-draft";
      discard.textContent = "Discard draft";
      discard.addEventListener("click", () => {
        setValue(serverCode);
        clearTimeout(draftTimer);
        drafts.clear();
        status.textContent = "Draft discarded.";
        view.focus();
      });
      status.append(discard);
      status.hidden = false;
    }
  }

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

// A JSON list of solutions ({name, code, diagnosis, ...}: the admin's wrong
// and right solutions of an exercise) edited as one small form per item, each
// with a code editor. The textarea stays the field the form posts, rewritten
// on every edit; a script or the browser filling it redraws the items. Text
// that is not such a list keeps the plain textarea, so the author can mend it
// (the form's own validation says what is wrong).
function enhanceList(textarea) {
  const wrong = textarea.dataset.codeList === "wrong";
  const noun = wrong ? "wrong solution" : "right variant";
  const box = document.createElement("div");
  box.className = "code-list";
  const note = document.createElement("p");
  note.className = "code-list-note";
  note.hidden = true;
  note.textContent = "Not a JSON list of {name, code} objects: edit it as text.";
  textarea.insertAdjacentElement("afterend", box);
  box.insertAdjacentElement("beforebegin", note);
  let items = [];
  const write = () => {
    textarea.value = JSON.stringify(items, null, 2);
  };
  const parse = () => {
    try {
      const value = JSON.parse(textarea.value.trim() || "[]");
      const ok = Array.isArray(value) &&
        value.every((item) => item && typeof item === "object" && !Array.isArray(item));
      return ok ? value : null;
    } catch (error) {
      return null;
    }
  };
  const field = (item, index, key, label) => {
    const id = textarea.id + "-" + index + "-" + key;
    const row = document.createElement("div");
    row.className = "code-list-field";
    const tag = document.createElement("label");
    tag.htmlFor = id;
    tag.textContent = label;
    const input = document.createElement(key === "code" ? "textarea" : "input");
    input.id = id;
    input.value = typeof item[key] === "string" ? item[key] : "";
    input.dataset.key = key;
    row.append(tag, input);
    input.addEventListener("input", () => {
      item[key] = input.value;
      write();
    });
    return row;
  };
  const render = () => {
    const parsed = parse();
    box.replaceChildren();
    if (parsed === null) {
      textarea.classList.remove("visually-hidden");
      textarea.removeAttribute("aria-hidden");
      textarea.tabIndex = 0;
      note.hidden = false;
      return;
    }
    items = parsed;
    note.hidden = true;
    textarea.classList.add("visually-hidden");
    textarea.setAttribute("aria-hidden", "true");
    textarea.tabIndex = -1;
    items.forEach((item, index) => {
      const set = document.createElement("fieldset");
      set.className = "code-list-item";
      const legend = document.createElement("legend");
      legend.textContent = noun.charAt(0).toUpperCase() + noun.slice(1) + " " + (index + 1);
      set.append(legend, field(item, index, "name", "Name"));
      if (wrong) set.append(field(item, index, "diagnosis", "Diagnosis (slug)"));
      const code = field(item, index, "code", "Code");
      set.append(code);
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "code-list-remove";
      remove.textContent = "Remove " + noun + " " + (index + 1);
      remove.addEventListener("click", () => {
        items.splice(index, 1);
        write();
        render();
      });
      set.append(remove);
      box.append(set);
      enhance(code.querySelector("textarea"));
    });
    const add = document.createElement("button");
    add.type = "button";
    add.className = "code-list-add";
    add.textContent = "Add a " + noun;
    add.addEventListener("click", () => {
      items.push(wrong ? { name: "", diagnosis: "", code: "" } : { name: "", code: "" });
      write();
      render();
      const names = box.querySelectorAll('input[data-key="name"]');
      names[names.length - 1].focus();
    });
    box.append(add);
  };
  textarea.addEventListener("input", render);
  render();
}

function init() {
  const textarea = document.getElementById("code");
  if (textarea && textarea.form) enhance(textarea, { exercise: true });
  for (const answer of document.querySelectorAll("textarea[data-code-editor]")) {
    if (answer.form && answer !== textarea) enhance(answer);
  }
  for (const list of document.querySelectorAll("textarea[data-code-list]")) {
    if (list.form) enhanceList(list);
  }
}

// Deferred on the site's pages; the admin's form media loads it in <head>.
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
else init();
