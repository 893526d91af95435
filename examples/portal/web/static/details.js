// gitops portal: the app details of the app page: the sources with their
// Helm values and parameters and Kustomize images, and the sync policy
// (automated sync, prune, self-heal, sync options). Editable when the
// server says the role may update the app; otherwise every field is shown
// disabled and there is no Save button (the API answers 403 anyway).
"use strict";

(() => {
  const h = (tag, props, ...kids) => { const e = Object.assign(document.createElement(tag), props || {}); e.append(...kids); return e; };
  const lines = (text) => text.split("\n").map((l) => l.trim()).filter(Boolean);
  const field = (label, input) => h("label", {className: "field"}, h("span", {}, label), input);

  function sourceBlock(src, i, edit) {
    const box = h("fieldset", {className: "source"}, h("legend", {}, "Source " + (i + 1)));
    const dl = h("dl", {className: "summary"});
    for (const [k, v] of [["Repository", src.repoURL], ["Path", src.path], ["Chart", src.chart], ["Target revision", src.targetRevision || "HEAD"]]) {
      if (v) dl.append(h("dt", {}, k), h("dd", {}, h("code", {}, v)));
    }
    box.append(dl);
    const isHelm = !!(src.chart || src.helm), isKustomize = !!src.kustomize;
    if (isHelm) {
      const helm = src.helm || {};
      if (helm.valueFiles && helm.valueFiles.length) box.append(h("p", {}, "Value files: ", h("code", {}, helm.valueFiles.join(", "))));
      const params = h("textarea", {id: i === 0 ? "helm-parameters" : "", rows: 4, disabled: !edit || i > 0,
        value: (helm.parameters || []).map((p) => p.name + "=" + p.value).join("\n")});
      const values = h("textarea", {id: i === 0 ? "helm-values" : "", rows: 6, disabled: !edit || i > 0, value: helm.values || ""});
      box.append(field("Helm parameters (name=value, one a line)", params), field("Helm values (YAML)", values));
    }
    if (isKustomize) {
      const images = h("textarea", {id: i === 0 ? "kustomize-images" : "", rows: 3, disabled: !edit || i > 0,
        value: (src.kustomize.images || []).join("\n")});
      box.append(field("Kustomize images (one a line)", images));
    }
    if (!isHelm && !isKustomize) box.append(h("p", {className: "note"}, "A plain directory: no Helm or Kustomize settings."));
    return box;
  }

  function policyBlock(d, edit) {
    const box = h("fieldset", {className: "policy"}, h("legend", {}, "Sync policy"));
    const check = (id, label, on) => h("label", {}, h("input", {type: "checkbox", id, checked: on, disabled: !edit}), " " + label);
    box.append(check("details-automated", "Automated sync", d.automated), check("details-prune", "Prune (automated)", d.prune),
      check("details-self-heal", "Self-heal (automated)", d.selfHeal),
      field("Sync options (Key=Value, one a line)", h("textarea", {id: "details-sync-options", rows: 3, disabled: !edit, value: d.syncOptions.join("\n")})));
    const sync = () => {
      const on = box.querySelector("#details-automated").checked;
      for (const id of ["#details-prune", "#details-self-heal"]) box.querySelector(id).disabled = !edit || !on;
    };
    box.addEventListener("change", sync);
    sync();
    return box;
  }

  function init(root) {
    const base = "/api/v1/apps/" + encodeURIComponent(root.dataset.app);
    const section = document.getElementById("details"), body = document.getElementById("details-body");
    const open = document.getElementById("details-open"), form = document.getElementById("details-form");
    const state = document.getElementById("details-state");
    if (!section || !open) return;
    let current = null;
    function render(d) {
      current = d;
      const kids = d.sources.map((s, i) => sourceBlock(s, i, d.canUpdate));
      kids.push(policyBlock(d, d.canUpdate));
      if (d.canUpdate) kids.push(h("button", {type: "submit", id: "details-save", className: "primary"}, "Save"));
      else kids.push(h("p", {className: "note", id: "details-readonly"}, "Read-only: your role may not update this application."));
      body.replaceChildren(...kids);
    }
    async function call(method, payload) {
      const opts = {method, headers: {Accept: "application/json"}, credentials: "same-origin"};
      if (payload) {
        opts.headers["Content-Type"] = "application/json";
        opts.headers["X-CSRF-Token"] = document.querySelector('meta[name="csrf-token"]').content;
        opts.body = JSON.stringify(payload);
      }
      const r = await fetch(base + "/details", opts);
      const d = await r.json().catch(() => ({}));
      if (!r.ok) throw new Error(d.error || r.statusText);
      return d;
    }
    open.addEventListener("click", async () => {
      section.hidden = !section.hidden;
      open.setAttribute("aria-expanded", String(!section.hidden));
      if (section.hidden) return;
      section.scrollIntoView();
      try { render(await call("GET")); state.textContent = ""; } catch (err) { body.textContent = "Details unavailable: " + err.message; }
    });
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (!current || !current.canUpdate) return;
      const val = (id) => document.getElementById(id);
      const edit = {automated: val("details-automated").checked, syncOptions: lines(val("details-sync-options").value)};
      if (edit.automated) { edit.prune = val("details-prune").checked; edit.selfHeal = val("details-self-heal").checked; }
      if (val("helm-parameters")) {
        edit.helmParameters = lines(val("helm-parameters").value).map((l) => { const i = l.indexOf("="); return {name: l.slice(0, i < 0 ? l.length : i), value: i < 0 ? "" : l.slice(i + 1)}; });
        edit.helmValues = val("helm-values").value;
      }
      if (val("kustomize-images")) edit.kustomizeImages = lines(val("kustomize-images").value);
      state.textContent = "Saving…";
      try { render(await call("POST", edit)); state.textContent = "Saved."; } catch (err) { state.textContent = "Not saved: " + err.message; }
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    const root = document.getElementById("app");
    if (root) init(root);
  });
})();
