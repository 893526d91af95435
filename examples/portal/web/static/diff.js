// gitops portal: the app-wide diff of the app page, every changed object in
// one view, unified or side by side. The diffs are the engine's (Secret
// values masked there); the view is fetched when opened and again at each
// "page" event while it is open.
"use strict";

(() => {
  const h = (tag, cls, ...kids) => { const e = document.createElement(tag); if (cls) e.className = cls; e.append(...kids); return e; };
  const kindOf = (line) => line.startsWith("+++") || line.startsWith("---") ? "meta"
    : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "ctx";

  function unified(text) {
    const pre = h("pre", "diff");
    pre.tabIndex = 0;
    for (const line of text.split("\n")) {
      const k = kindOf(line);
      if (k === "meta") continue;
      pre.append(h("span", k, line + "\n"));
    }
    return pre;
  }

  // sideBySide pairs each run of removed lines with the run of added lines
  // after it, row by row; context lines sit on both sides.
  function sideBySide(text) {
    const table = h("table", "sbs");
    const body = h("tbody", "");
    table.append(h("thead", "", h("tr", "", h("th", "", "Live"), h("th", "", "Desired"))), body);
    const row = (l, lc, r, rc) => body.append(h("tr", "", h("td", lc, l), h("td", rc, r)));
    let dels = [], adds = [];
    const flush = () => {
      for (let i = 0; i < Math.max(dels.length, adds.length); i++) {
        row(dels[i] ?? "", i < dels.length ? "del" : "", adds[i] ?? "", i < adds.length ? "add" : "");
      }
      dels = []; adds = [];
    };
    for (const line of text.split("\n")) {
      const k = kindOf(line);
      if (k === "meta") continue;
      if (k === "del") { if (adds.length) flush(); dels.push(line.slice(1)); continue; }
      if (k === "add") { adds.push(line.slice(1)); continue; }
      flush();
      if (k === "hunk") row(line, "hunk", line, "hunk");
      else if (line !== "") row(line.slice(1), "", line.slice(1), "");
    }
    flush();
    return table;
  }

  function init(root) {
    const base = "/api/v1/apps/" + encodeURIComponent(root.dataset.app);
    const section = document.getElementById("app-diff"), out = document.getElementById("app-diff-body");
    const open = document.getElementById("app-diff-open");
    const modes = Array.from(document.querySelectorAll("[data-diff-mode]"));
    if (!section || !out || !open) return;
    let mode = "unified", rows = null;
    function render() {
      if (!rows) return;
      if (!rows.length) { out.textContent = "No changed object: the app is in sync with Git."; return; }
      out.replaceChildren(...rows.map((r) => {
        const item = h("article", "changed");
        item.dataset.key = r.key;
        const title = h("h3", "", r.key + (r.requiresPruning ? " (requires pruning)" : ""));
        item.append(title);
        if (r.diff) item.append(mode === "unified" ? unified(r.diff) : sideBySide(r.diff));
        else item.append(h("p", "note", "Not in Git any more: a sync with prune deletes it."));
        return item;
      }));
    }
    async function load() {
      try {
        const r = await fetch(base + "/diff", {headers: {Accept: "application/json"}, credentials: "same-origin"});
        const d = await r.json().catch(() => ({}));
        if (!r.ok) throw new Error(d.error || r.statusText);
        rows = d;
        render();
      } catch (err) { out.textContent = "Diff unavailable: " + err.message; }
    }
    open.addEventListener("click", () => {
      section.hidden = !section.hidden;
      open.setAttribute("aria-expanded", String(!section.hidden));
      if (!section.hidden) { load(); section.scrollIntoView(); }
    });
    for (const b of modes) {
      b.addEventListener("click", () => {
        mode = b.dataset.diffMode;
        for (const m of modes) m.setAttribute("aria-pressed", String(m === b));
        render();
      });
    }
    document.addEventListener("portal:page", () => { if (!section.hidden) load(); });
  }

  document.addEventListener("DOMContentLoaded", () => {
    const root = document.getElementById("app");
    if (root) init(root);
  });
})();
