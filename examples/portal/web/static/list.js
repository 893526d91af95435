// gitops portal, the list page: selection and bulk sync. The counts
// (tiles) and filters are links rendered by the server; this script only
// posts the selection and shows what started and what was refused.
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

  document.addEventListener("DOMContentLoaded", () => {
    if (!$("#bulk-sync")) return;
    document.querySelectorAll("input.select-app").forEach((b) => b.addEventListener("change", update));
    $("#select-all").addEventListener("change", (e) => {
      document.querySelectorAll("input.select-app").forEach((b) => { b.checked = e.target.checked; });
      update();
    });
    $("#bulk-sync").addEventListener("click", () => { bulkSync().catch((e) => { $("#bulk-result").textContent = String(e); }); });
  });
})();
