// gitops portal, the list kept live: each event of the list's stream
// ("app", "created", "removed") reads the list again with the page's own
// filters and page (GET /api/v1/apps?<the page's query>) and redraws its
// rows, the tiles' counts and the count line in place. Rows already shown
// are patched, not replaced, so a ticked box or a focused link survives a
// push. Events arriving while a read is under way are folded into one
// more read after it, so a burst of changes costs two reads, not one each.
// A reconnect of the stream reads the list again too.
"use strict";

(() => {
  const $ = (sel) => document.querySelector(sel);

  function cell(...children) { const td = document.createElement("td"); td.append(...children); return td; }

  function when(t) {
    if (!t) return "never";
    return new Date(t).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
  }

  // rowFor makes the row of r (an appRow), as list.html renders it.
  function rowFor(r) {
    const tr = document.createElement("tr");
    tr.dataset.app = r.name;
    const box = document.createElement("input");
    Object.assign(box, {type: "checkbox", className: "select-app", value: r.name});
    box.setAttribute("aria-label", "select " + r.name);
    const a = document.createElement("a");
    Object.assign(a, {className: "app-link", href: "/apps/" + encodeURIComponent(r.name), textContent: r.name});
    tr.append(cell(box), cell(a), cell(r.project), cell(r.cluster + " / " + r.namespace), cell(), cell(), cell(), cell());
    return tr;
  }

  // patchRow sets the cells of tr that a push may change.
  function patchRow(tr, r) {
    const c = tr.children;
    const same = (td, status) => { const b = td.querySelector(".badge"); return b && b.dataset.status === status; };
    if (!same(c[4], r.sync)) c[4].replaceChildren(badge(r.sync));
    if (!same(c[5], r.health)) c[5].replaceChildren(badge(r.health));
    const rev = r.revision || "";
    if (!c[6].firstChild || c[6].firstChild.title !== rev) {
      const code = document.createElement("code");
      code.title = rev;
      code.textContent = rev.slice(0, 8);
      c[6].replaceChildren(code);
    }
    const last = when(r.lastSync);
    if (c[7].textContent !== last) c[7].textContent = last;
  }

  // render shows l (an appList): rows in its order, tiles, count line.
  function render(l) {
    const body = $("#apps tbody");
    const shown = new Map(Array.from(body.querySelectorAll("tr[data-app]")).map((tr) => [tr.dataset.app, tr]));
    const rows = l.items.map((r) => {
      const tr = shown.get(r.name) || rowFor(r);
      shown.delete(r.name);
      patchRow(tr, r);
      return tr;
    });
    if (!rows.length) {
      const tr = document.createElement("tr");
      const td = cell("No application matches.");
      td.colSpan = 8;
      tr.append(td);
      rows.push(tr);
    }
    // Moving a row takes it out of the page for a moment, which drops
    // the focus of a link in it: give the focus back to what had it.
    const focused = body.contains(document.activeElement) ? document.activeElement : null;
    body.replaceChildren(...rows);
    if (focused && focused.isConnected && document.activeElement !== focused) focused.focus({preventScroll: true});
    for (const t of document.querySelectorAll("#tiles a.tile")) {
      const counts = t.dataset.kind === "sync" ? l.syncCounts : l.healthCounts;
      const n = String(counts[t.dataset.status] || 0);
      const el = t.querySelector(".tile-count");
      if (el.textContent !== n) el.textContent = n;
    }
    $("#count").textContent = l.total + " applications · page " + l.page + " of " + l.pages;
    document.dispatchEvent(new CustomEvent("portal:list", {detail: l}));
  }

  let reading = false, again = false;
  // reload reads the list again; a call during a read asks for one more.
  async function reload() {
    if (reading) { again = true; return; }
    reading = true;
    try {
      do {
        again = false;
        const r = await fetch("/api/v1/apps" + location.search, {credentials: "same-origin", headers: {"Accept": "application/json"}});
        if (r.ok) render(await r.json());
      } while (again);
    } finally {
      reading = false;
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    if (!$("#apps")) return;
    const es = new EventSource("/api/v1/stream");
    // A reconnect may have missed events: read the list again then. The
    // page marks the stream open (data-list-stream) once it listens.
    let opened = false;
    es.addEventListener("open", () => {
      if (opened) reload().catch(() => {});
      opened = true;
      $("#apps").dataset.listStream = "open";
    });
    for (const name of ["app", "created", "removed"]) es.addEventListener(name, () => { reload().catch(() => {}); });
    // The page's own changes (a create) read the list at once too.
    document.addEventListener("portal:reload-list", () => { reload().catch(() => {}); });
  });
})();
