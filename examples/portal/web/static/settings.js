// gitops portal, the settings pages (repositories, clusters, projects):
// each form posts its fields as JSON with the session's CSRF token (Enter
// in any field submits it); a list field (data-list) is split at commas,
// a destinations field (data-destinations) into "server-or-name
// namespace" pairs; a delete asks for the object's name typed. After a
// write the page is read again with what was done; a refusal or an error
// is shown beside the form. The repositories' connection states are read
// once the page is shown (GET /api/v1/repositories?connection=true).
"use strict";

(() => {
  const token = () => document.querySelector('meta[name="csrf-token"]').content;
  const items = (v) => v.split(",").map((s) => s.trim()).filter(Boolean);

  function destination(item) {
    const [where, namespace = ""] = item.split(/\s+/);
    return /^https?:\/\//.test(where) ? {server: where, namespace} : {name: where, namespace};
  }

  function bodyOf(form) {
    const body = {};
    for (const el of form.elements) {
      if (!el.name || el.name === "confirm") continue;
      if (el.dataset.list !== undefined) body[el.name] = items(el.value);
      else if (el.dataset.destinations !== undefined) body[el.name] = items(el.value).map(destination);
      else body[el.name] = el.value;
    }
    return body;
  }

  function doneText(form, body) {
    const action = form.dataset.action;
    if (action.endsWith("/delete")) return "Deleted " + form.dataset.confirm + ".";
    if (action.endsWith("/update")) return "Saved " + decodeURIComponent(action.split("/").slice(-2)[0]) + ".";
    return "Created " + (body.name || body.url) + ".";
  }

  document.addEventListener("submit", async (e) => {
    const form = e.target.closest("form.settings-form");
    if (!form) return;
    e.preventDefault();
    const out = form.querySelector(".form-error");
    out.textContent = "";
    if (form.dataset.confirm !== undefined && form.elements.confirm.value !== form.dataset.confirm) {
      out.textContent = "Type " + form.dataset.confirm + " to confirm.";
      return;
    }
    const body = bodyOf(form);
    const r = await fetch(form.dataset.action, {method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": token()},
      body: JSON.stringify(body)});
    const data = await r.json().catch(() => ({}));
    if (!r.ok) {
      out.textContent = data.error || r.statusText;
      return;
    }
    window.location.assign(window.location.pathname + "?done=" + encodeURIComponent(doneText(form, body)));
  });

  async function connections() {
    if (!document.querySelector("#repos tr[data-kind=repository]")) return;
    const r = await fetch("/api/v1/repositories?connection=true", {credentials: "same-origin", headers: {"Accept": "application/json"}});
    if (!r.ok) return;
    for (const it of (await r.json()).items) {
      const cell = document.querySelector('#repos tr[data-repo="' + CSS.escape(it.id) + '"] .repo-connection');
      if (!cell || !it.connection || it.kind !== "repository") continue;
      cell.textContent = it.connection.status;
      if (it.connection.message) {
        const why = document.createElement("small");
        why.className = "connection-message";
        why.textContent = it.connection.message;
        cell.append(document.createElement("br"), why);
      }
      cell.dataset.connection = it.connection.status;
    }
  }
  connections();
})();
