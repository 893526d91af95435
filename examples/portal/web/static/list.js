// gitops portal, the list page: selection and the bulk operations (sync,
// refresh, and delete after a dialog naming the apps, with Argo CD's
// cascade choices), and the create dialog. The rows and tiles are kept
// live by listlive.js; the filters are links rendered by the server.
"use strict";

(() => {
  const $ = (sel) => document.querySelector(sel);
  const token = () => document.querySelector('meta[name="csrf-token"]').content;

  function selected() {
    return Array.from(document.querySelectorAll("input.select-app:checked")).map((b) => b.value);
  }

  function update() {
    const n = selected().length;
    for (const id of ["#bulk-sync", "#bulk-refresh", "#bulk-delete"]) $(id).disabled = n === 0;
    $("#bulk-count").textContent = n + " selected";
  }

  async function post(path, body) {
    const r = await fetch(path, {method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": token()},
      body: JSON.stringify(body)});
    const data = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(data.error || r.statusText);
    return data;
  }

  // showResult says which apps an operation started (what: "Sync
  // started") and lists each refused one with why.
  function showResult(what, data) {
    const out = $("#bulk-result");
    out.replaceChildren();
    const p = document.createElement("p");
    p.id = "bulk-started";
    p.textContent = what + ": " + (data.started.length ? data.started.join(", ") : "none");
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

  async function bulk(label, path, what, body) {
    const apps = selected();
    $("#bulk-result").textContent = label + " " + apps.length + "…";
    try {
      showResult(what, await post(path, Object.assign({apps}, body)));
    } catch (err) {
      $("#bulk-result").textContent = label + ": " + err.message;
    }
  }

  // deleteDialog names the selected apps, offers the cascade and the
  // approval of resources marked Delete=confirm (unchecked at each
  // opening), and asks for their number typed to confirm.
  function deleteDialog() {
    const dialog = $("#bulk-delete-dialog");
    const input = $("#bulk-delete-confirm");
    const go = $("#bulk-delete-go");
    let apps = [];
    input.addEventListener("input", () => { go.disabled = input.value.trim() !== String(apps.length); });
    $("#bulk-delete").addEventListener("click", () => {
      apps = selected();
      const ul = $("#bulk-delete-apps");
      ul.replaceChildren(...apps.map((a) => Object.assign(document.createElement("li"), {textContent: a})));
      $("#bulk-delete-count").textContent = String(apps.length);
      input.value = "";
      $("#bulk-delete-confirm-resources").checked = false;
      go.disabled = true;
      dialog.showModal();
      input.focus();
    });
    $("#bulk-delete-cancel").addEventListener("click", () => dialog.close());
    $("#bulk-delete-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      if (go.disabled) return;
      dialog.close();
      const cascade = new FormData(e.target).get("cascade");
      $("#bulk-result").textContent = "Deleting " + apps.length + "…";
      try {
        showResult("Deletion started", await post("/api/v1/delete", {apps, cascade, confirm: input.value.trim(),
          confirmResources: $("#bulk-delete-confirm-resources").checked}));
      } catch (err) {
        $("#bulk-result").textContent = "Bulk delete: " + err.message;
      }
    });
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
        await post("/api/v1/apps", body);
        dialog.close();
        document.dispatchEvent(new Event("portal:reload-list"));
      } catch (err) {
        $("#create-error").textContent = err.message;
      }
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    if (!$("#bulk-sync")) return;
    createDialog();
    deleteDialog();
    // Rows come and go with pushes: listen on the table, not on each box.
    $("#apps tbody").addEventListener("change", (e) => { if (e.target.matches("input.select-app")) update(); });
    document.addEventListener("portal:list", update);
    $("#select-all").addEventListener("change", (e) => {
      document.querySelectorAll("input.select-app").forEach((b) => { b.checked = e.target.checked; });
      update();
    });
    $("#bulk-sync").addEventListener("click", () => bulk("Syncing", "/api/v1/sync", "Sync started", {prune: $("#bulk-prune").checked}));
    $("#bulk-refresh").addEventListener("click", () => bulk("Refreshing", "/api/v1/refresh", "Refresh queued", {hard: $("#bulk-hard").checked}));
  });
})();
