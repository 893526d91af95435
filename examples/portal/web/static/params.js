// gitops portal: the app page's parameter table (Argo CD's PARAMETERS
// tab), from GET /api/v1/apps/{name}/parameters: a Helm source's values
// with the source's overrides marked, a Kustomize source's rendered images
// with the override that set each. For a role that may update the app
// (data-can-update), the first source's overrides are inputs; Save (or
// Enter in one) POSTs them to .../details as helmParameters or
// kustomizeImages, which the server validates, audits and hands to the
// engine, then the table is read again.
"use strict";

(() => {
  const h = (tag, props, ...kids) => { const e = Object.assign(document.createElement(tag), props || {}); e.append(...kids); return e; };
  const th = (text) => h("th", {scope: "col"}, text);
  const mark = () => h("span", {className: "badge s-override"}, "override");

  function helmTable(src, edit) {
    const rows = src.helm.parameters.map((p) => {
      const input = h("input", {className: "param-override", value: p.override ?? "", placeholder: p.inChart ? p.value : "",
        disabled: !edit, autocomplete: "off"});
      input.dataset.name = p.name;
      input.dataset.forceString = String(!!p.forceString);
      input.setAttribute("aria-label", "override of " + p.name);
      const tr = h("tr", {className: "param" + (p.override != null ? " overridden" : "")},
        h("td", {}, h("code", {}, p.name)), h("td", {}, p.inChart ? p.value : h("span", {className: "msg"}, "not in the chart")),
        h("td", {}, input, p.override != null ? mark() : ""));
      tr.dataset.name = p.name;
      return tr;
    });
    const add = h("tr", {}, h("td", {}, h("input", {id: "param-new-name", placeholder: "new parameter", disabled: !edit, autocomplete: "off", ariaLabel: "new parameter name"})),
      h("td", {}), h("td", {}, h("input", {id: "param-new-value", disabled: !edit, autocomplete: "off", ariaLabel: "new parameter value"})));
    return h("table", {className: "params helm-params"}, h("thead", {}, h("tr", {}, th("Parameter"), th("Chart value"), th("Override"))),
      h("tbody", {}, ...rows, ...(edit ? [add] : [])));
  }

  function kustomizeTable(src, edit) {
    const used = new Set(src.kustomize.images.map((i) => i.override).filter(Boolean));
    const rows = src.kustomize.images.map((i) => {
      const input = h("input", {className: "image-override", value: i.override || "", placeholder: i.image, disabled: !edit, autocomplete: "off"});
      input.setAttribute("aria-label", "override of " + i.image);
      const tr = h("tr", {className: "image" + (i.override ? " overridden" : "")}, h("td", {}, h("code", {}, i.image)),
        h("td", {}, input, i.override ? mark() : ""));
      tr.dataset.image = i.image;
      return tr;
    });
    const table = h("table", {className: "params kustomize-images"}, h("thead", {}, h("tr", {}, th("Image"), th("Override"))), h("tbody", {}, ...rows));
    // Overrides that match no rendered image are kept as they are.
    table.dataset.unmatched = JSON.stringify(src.kustomize.overrides.filter((o) => !used.has(o)));
    return table;
  }

  function sourceBlock(src, edit) {
    const box = h("fieldset", {className: "source"}, h("legend", {}, "Source " + (src.index + 1) + (src.type ? " (" + src.type + ")" : "")));
    if (src.error) box.append(h("p", {className: "error"}, src.error));
    if (src.helm) box.append(helmTable(src, edit));
    else if (src.kustomize) box.append(kustomizeTable(src, edit));
    else if (!src.error) box.append(h("p", {className: "note"}, "No parameters: a plain directory."));
    return box;
  }

  // edited reads the first source's inputs back into a details edit.
  function edited(box) {
    const edit = {};
    const helm = box.querySelector("table.helm-params");
    if (helm) {
      edit.helmParameters = Array.from(helm.querySelectorAll("input.param-override")).filter((i) => i.value !== "")
        .map((i) => ({name: i.dataset.name, value: i.value, forceString: i.dataset.forceString === "true"}));
      const name = box.querySelector("#param-new-name").value.trim();
      if (name) edit.helmParameters.push({name, value: box.querySelector("#param-new-value").value});
    }
    const kz = box.querySelector("table.kustomize-images");
    if (kz) {
      edit.kustomizeImages = JSON.parse(kz.dataset.unmatched).concat(
        Array.from(kz.querySelectorAll("input.image-override")).map((i) => i.value.trim()).filter(Boolean));
    }
    return edit;
  }

  function init(root) {
    const base = "/api/v1/apps/" + encodeURIComponent(root.dataset.app);
    const edit = root.dataset.canUpdate === "true";
    const section = document.getElementById("parameters"), open = document.getElementById("parameters-open");
    const form = document.getElementById("parameters-form"), body = document.getElementById("parameters-body");
    const state = document.getElementById("parameters-state");
    if (!section || !open) return;
    const csrf = () => document.querySelector('meta[name="csrf-token"]').content;
    async function load() {
      const r = await fetch(base + "/parameters", {credentials: "same-origin", headers: {Accept: "application/json"}});
      const d = await r.json().catch(() => ({}));
      if (!r.ok) throw new Error(d.error || r.statusText);
      const blocks = d.map((s) => sourceBlock(s, edit && s.index === 0));
      if (edit && d.length && (d[0].helm || d[0].kustomize)) blocks.push(h("button", {type: "submit", id: "parameters-save", className: "primary"}, "Save"));
      else if (!edit) blocks.push(h("p", {className: "note", id: "parameters-readonly"}, "Read-only: your role may not update this application."));
      body.replaceChildren(...blocks);
    }
    open.addEventListener("click", async () => {
      section.hidden = !section.hidden;
      open.setAttribute("aria-expanded", String(!section.hidden));
      if (section.hidden) return;
      section.scrollIntoView();
      try { await load(); state.textContent = ""; } catch (err) { body.textContent = "Parameters unavailable: " + err.message; }
    });
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const first = body.querySelector("fieldset.source");
      if (!edit || !first) return;
      state.textContent = "Saving…";
      try {
        const r = await fetch(base + "/details", {method: "POST", credentials: "same-origin",
          headers: {"Content-Type": "application/json", Accept: "application/json", "X-CSRF-Token": csrf()}, body: JSON.stringify(edited(first))});
        const d = await r.json().catch(() => ({}));
        if (!r.ok) throw new Error(d.error || r.statusText);
        await load();
        state.textContent = "Saved.";
      } catch (err) {
        state.textContent = "Not saved: " + err.message;
      }
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    const root = document.getElementById("app");
    if (root) init(root);
  });
})();
