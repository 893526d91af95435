// gitops portal, the list page: selection and bulk sync, the create
// dialog, and the list's event stream (a row changes, appears or goes as
// the server pushes it). The counts (tiles) and filters are links rendered
// by the server.
"use strict";

(() => {
  const $ = (sel) => document.querySelector(sel);
  const token = () => document.querySelector('meta[name="csrf-token"]').content;

  function selected() {
    return Array.from(document.querySelectorAll("input.select-app:checked")).map((b) => b.value);
  }

  function update() {
    const n = selected().length;
    $("#bulk-sync").disabled = n === 0;
    $("#bulk-count").textContent = n + " selected";
  }

  async function bulkSync() {
    const apps = selected();
    const out = $("#bulk-result");
    out.textContent = "Syncing " + apps.length + "…";
    const r = await fetch("/api/v1/sync", {method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": token()},
      body: JSON.stringify({apps, prune: $("#bulk-prune").checked})});
    const data = await r.json().catch(() => ({}));
    out.replaceChildren();
    if (!r.ok) { out.textContent = "Bulk sync: " + (data.error || r.statusText); return; }
    const p = document.createElement("p");
    p.id = "bulk-started";
    p.textContent = "Sync started: " + (data.started.length ? data.started.join(", ") : "none");
    out.append(p);
    if (data.refused.length) {
      const ul = document.createElement("ul");
      ul.id = "bulk-refused";
      for (const f of data.refused) {
        const li = document.createElement("li");
        li.className = "refused";
        li.dataset.app = f.app;
        li.textContent = f.app + ": " + f.error;
        ul.append(li);
      }
      out.append("Refused:", ul);
    }
  }

  async function post(path, body) {
    const r = await fetch(path, {method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": token()},
      body: JSON.stringify(body)});
    const data = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(data.error || r.statusText);
    return data;
  }

  function createDialog() {
    const dialog = $("#create-dialog");
    $("#new-app").addEventListener("click", () => { $("#create-error").textContent = ""; dialog.showModal(); $("#create-name").focus(); });
    $("#create-cancel").addEventListener("click", () => dialog.close());
    $("#create-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const f = new FormData(e.target);
      const body = {};
      for (const k of ["name", "project", "repoURL", "path", "targetRevision", "cluster", "namespace"]) body[k] = f.get(k) || "";
      for (const k of ["automated", "prune", "selfHeal"]) body[k] = f.get(k) === "on";
      try {
        const row = await post("/api/v1/apps", body);
        dialog.close();
        upsertRow(row, true);
      } catch (err) {
        $("#create-error").textContent = err.message;
      }
    });
  }

  function cell(child) { const td = document.createElement("td"); td.append(child); return td; }

  // upsertRow shows row (an appRow): its badges change in place if the
  // page shows it; else, for a created app (add), a row is added at the top.
  function upsertRow(row, add) {
    const tr = document.querySelector('tr[data-app="' + CSS.escape(row.name) + '"]');
    if (tr) {
      tr.children[4].replaceChildren(badge(row.sync));
      tr.children[5].replaceChildren(badge(row.health));
      return;
    }
    if (!add) return;
    const n = document.createElement("tr");
    n.dataset.app = row.name;
    const box = document.createElement("input");
    Object.assign(box, {type: "checkbox", className: "select-app", value: row.name});
    box.setAttribute("aria-label", "select " + row.name);
    box.addEventListener("change", update);
    const a = document.createElement("a");
    Object.assign(a, {className: "app-link", href: "/apps/" + encodeURIComponent(row.name), textContent: row.name});
    const rev = document.createElement("code");
    rev.textContent = (row.revision || "").slice(0, 8);
    n.append(cell(box), cell(a), cell(row.project), cell(row.cluster + " / " + row.namespace), cell(badge(row.sync)),
      cell(badge(row.health)), cell(rev), cell(""));
    $("#apps tbody").prepend(n);
  }

  function stream() {
    const es = new EventSource("/api/v1/stream");
    es.addEventListener("app", (m) => upsertRow(JSON.parse(m.data), false));
    es.addEventListener("created", (m) => upsertRow(JSON.parse(m.data), true));
    es.addEventListener("removed", (m) => {
      const tr = document.querySelector('tr[data-app="' + CSS.escape(JSON.parse(m.data).name) + '"]');
      if (tr) tr.remove();
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    if (!$("#bulk-sync")) return;
    createDialog();
    stream();
    document.querySelectorAll("input.select-app").forEach((b) => b.addEventListener("change", update));
    $("#select-all").addEventListener("change", (e) => {
      document.querySelectorAll("input.select-app").forEach((b) => { b.checked = e.target.checked; });
      update();
    });
    $("#bulk-sync").addEventListener("click", () => { bulkSync().catch((e) => { $("#bulk-result").textContent = String(e); }); });
  });
})();
