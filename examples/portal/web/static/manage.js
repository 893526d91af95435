// gitops portal, the app page's deletions: the app (with Argo CD's cascade
// choices, for a role that may delete it) and one resource of its tree
// (delete, orphan or force, enabled for each resource the role may
// delete), each confirmed by typing the name, as Argo CD asks. After the app's deletion
// the list's event stream says when it is gone; then the list opens.
"use strict";

(() => {
  const $ = (sel) => document.querySelector(sel);
  const token = () => document.querySelector('meta[name="csrf-token"]').content;

  async function post(path, body) {
    const r = await fetch(path, {method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": token()},
      body: JSON.stringify(body)});
    const data = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(data.error || r.statusText);
    return data;
  }

  // confirmBy enables go only while input holds exactly name.
  function confirmBy(input, go, name) {
    const check = () => { go.disabled = input.value !== name(); };
    input.addEventListener("input", check);
    return check;
  }

  function deleteApp(root) {
    const app = root.dataset.app;
    const dialog = $("#delete-app-dialog");
    const input = $("#delete-app-confirm");
    const check = confirmBy(input, $("#delete-app-go"), () => app);
    $("#delete-app").addEventListener("click", () => {
      input.value = "";
      $("#delete-app-error").textContent = "";
      check();
      dialog.showModal();
      input.focus();
    });
    $("#delete-app-cancel").addEventListener("click", () => dialog.close());
    $("#delete-app-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const cascade = new FormData(e.target).get("cascade");
      // Listen before asking, so the "removed" event cannot be missed.
      const es = new EventSource("/api/v1/stream");
      es.addEventListener("removed", (m) => {
        if (JSON.parse(m.data).name === app) { es.close(); window.location.assign("/?deleted=" + encodeURIComponent(app)); }
      });
      try {
        await post("/api/v1/apps/" + encodeURIComponent(app) + "/delete",
          {cascade, confirm: input.value, confirmResources: $("#delete-confirm-resources").checked});
        dialog.close();
        $("#notice").textContent = "Deleting " + app + " (" + cascade + ")…";
      } catch (err) {
        es.close();
        $("#delete-app-error").textContent = err.message;
      }
    });
  }

  function deleteResource(root) {
    const app = root.dataset.app;
    let key = "";
    const name = () => key.slice(key.lastIndexOf("/") + 1);
    const button = $("#delete-resource");
    const dialog = $("#delete-resource-dialog");
    const input = $("#delete-resource-confirm");
    const check = confirmBy(input, $("#delete-resource-go"), name);
    // The tree's node buttons open a resource: it becomes the one to
    // delete, when the caller's role may delete it (Argo CD 3 asks
    // "delete/<group>/<kind>/<namespace>/<name>" of each resource).
    document.addEventListener("click", async (e) => {
      const b = e.target.closest("button.open-node");
      if (!b) return;
      const k = b.dataset.key;
      key = k;
      button.disabled = true;
      button.dataset.key = k;
      button.title = "checking whether you may delete " + k;
      let may = false;
      try {
        const r = await fetch("/api/v1/apps/" + encodeURIComponent(app) + "/permissions?key=" + encodeURIComponent(k),
          {credentials: "same-origin", headers: {"Accept": "application/json"}});
        may = r.ok && (await r.json()).deleteResource === true;
      } catch (err) {
        may = false;
      }
      if (key !== k) return; // another resource was opened meanwhile
      button.disabled = !may;
      button.title = may ? "delete " + k : "your role may not delete " + k;
    });
    button.addEventListener("click", () => {
      $("#delete-resource-key").textContent = key;
      $("#delete-resource-name").textContent = name();
      $("#delete-resource-error").textContent = "";
      input.value = "";
      check();
      dialog.showModal();
      input.focus();
    });
    $("#delete-resource-cancel").addEventListener("click", () => dialog.close());
    $("#delete-resource-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const mode = new FormData(e.target).get("mode");
      try {
        await post("/api/v1/apps/" + encodeURIComponent(app) + "/resource/delete", {key, mode, confirm: input.value});
        dialog.close();
        $("#notice").textContent = "Deleted " + key + " (" + mode + ")";
      } catch (err) {
        $("#delete-resource-error").textContent = err.message;
      }
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    const root = $("#app");
    if (!root || !$("#delete-resource")) return;
    if ($("#delete-app")) deleteApp(root);
    deleteResource(root);
  });
})();
