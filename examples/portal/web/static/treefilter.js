// gitops portal: the resource list's filters on the app page, by name,
// kind, sync status and health, as Argo CD's app page filters its tree.
// A node shows when it matches every filter set, or when one of its
// descendants does (for context); the filters are applied again after
// each pushed page has patched the tree.
"use strict";

(() => {
  const $ = (sel) => document.querySelector(sel);

  function facts(li) {
    const status = (cls) => { const b = li.querySelector(":scope > ." + cls + " .badge"); return b ? b.dataset.status : ""; };
    const kind = li.querySelector(":scope > button.open-node .kind");
    const key = li.dataset.key || "";
    return {kind: kind ? kind.textContent : "", name: key.slice(key.lastIndexOf("/") + 1), sync: status("node-sync"), health: status("node-health")};
  }

  function apply() {
    const tree = $("#tree");
    if (!tree) return;
    const f = {name: $("#tree-filter-name").value.trim().toLowerCase(), kind: $("#tree-filter-kind").value,
      sync: $("#tree-filter-sync").value, health: $("#tree-filter-health").value};
    const kinds = new Set();
    const visit = (li) => {
      const n = facts(li);
      kinds.add(n.kind);
      const own = (!f.name || n.name.toLowerCase().includes(f.name)) && (!f.kind || n.kind === f.kind) &&
        (!f.sync || n.sync === f.sync) && (!f.health || n.health === f.health);
      let below = false;
      for (const c of li.querySelectorAll(":scope > ul > li.node")) below = visit(c) || below;
      li.hidden = !(own || below);
      return own || below;
    };
    let shown = 0;
    for (const li of tree.querySelectorAll(":scope > li.node")) if (visit(li)) shown++;
    const sel = $("#tree-filter-kind");
    const want = ["", ...Array.from(kinds).filter(Boolean).sort()];
    if (Array.from(sel.options).map((o) => o.value).join("|") !== want.join("|")) {
      const cur = sel.value;
      sel.replaceChildren(...want.map((k) => Object.assign(document.createElement("option"), {value: k, textContent: k || "all"})));
      sel.value = want.includes(cur) ? cur : "";
    }
    $("#tree-filter-count").textContent = (f.name || f.kind || f.sync || f.health) ? shown + " of " + tree.querySelectorAll(":scope > li.node").length + " resources match" : "";
  }

  document.addEventListener("DOMContentLoaded", () => {
    const bar = $("#tree-filters");
    if (!bar) return;
    bar.addEventListener("input", apply);
    bar.addEventListener("change", apply);
    // app.js tells of a pushed page before it patches the tree.
    document.addEventListener("portal:page", () => setTimeout(apply, 0));
    apply();
  });
})();
