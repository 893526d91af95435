// gitops portal: zoom and pan of the graph and network views (graph.js
// draws them). Each view box keeps its own zoom level and scroll position
// across redraws, so a pushed page never resets them. Zoom: the toolbar's
// buttons, Ctrl+wheel over the view, and the keys +, - and 0 (fit) while
// the focus is in the view; pan: drag the view with the mouse (or scroll
// it). The level is the box's data-zoom attribute (1 is 100 %).
"use strict";

(() => {
  const MIN = 0.2, MAX = 3, STEP = 1.25;

  // zoomer returns the zoom of one view box: apply(svg), before each new
  // SVG goes in, sizes it at the kept level; zoomIn, zoomOut and fit
  // change the level.
  function zoomer(box, onChange) {
    let scale = 1, svg = null, baseW = 0, baseH = 0;
    const clamp = (s) => Math.min(MAX, Math.max(MIN, s));
    box.dataset.zoom = "1";
    function size(keepX, keepY) {
      if (!svg) return;
      // The point of the view at (keepX, keepY), in the box, stays put.
      const before = svg.width.baseVal.value || baseW;
      const fx = (box.scrollLeft + keepX) / before, fy = (box.scrollTop + keepY) / (svg.height.baseVal.value || baseH);
      svg.setAttribute("width", String(Math.round(baseW * scale)));
      svg.setAttribute("height", String(Math.round(baseH * scale)));
      box.scrollLeft = fx * baseW * scale - keepX;
      box.scrollTop = fy * baseH * scale - keepY;
    }
    function set(s, keepX, keepY) {
      scale = clamp(s);
      box.dataset.zoom = String(Math.round(scale * 1000) / 1000);
      size(keepX === undefined ? box.clientWidth / 2 : keepX, keepY === undefined ? box.clientHeight / 2 : keepY);
      if (onChange) onChange(scale);
    }
    return {
      apply(next) {
        svg = next;
        baseW = Number(next.getAttribute("width")) || 0;
        baseH = Number(next.getAttribute("height")) || 0;
        next.setAttribute("width", String(Math.round(baseW * scale)));
        next.setAttribute("height", String(Math.round(baseH * scale)));
      },
      zoomIn(x, y) { set(scale * STEP, x, y); },
      zoomOut(x, y) { set(scale / STEP, x, y); },
      // fit shows the whole graph in the box's width and its greatest
      // height (70 % of the window, graph.css), never above 100 %.
      fit() {
        if (!baseW || !baseH) return;
        const w = box.clientWidth - 4, h = Math.max(window.innerHeight * 0.7, box.clientHeight) - 4;
        set(Math.min(1, w / baseW, h / baseH), 0, 0);
        box.scrollLeft = 0;
        box.scrollTop = 0;
      },
      level() { return scale; },
    };
  }

  // wire connects a box's zoomer to the mouse and the keyboard.
  function wire(box, z) {
    box.addEventListener("wheel", (e) => {
      if (!e.ctrlKey) return;
      e.preventDefault();
      const r = box.getBoundingClientRect();
      (e.deltaY < 0 ? z.zoomIn : z.zoomOut)(e.clientX - r.left, e.clientY - r.top);
    }, {passive: false});
    box.addEventListener("keydown", (e) => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const act = {"+": z.zoomIn, "=": z.zoomIn, "-": z.zoomOut, "0": z.fit}[e.key];
      if (!act) return;
      e.preventDefault();
      act();
    });
    // Drag to pan: a press that moves more than a few pixels pans, and the
    // click that ends it does not open a node.
    let drag = null, swallow = 0;
    box.addEventListener("click", (e) => { if (performance.now() < swallow) e.stopPropagation(); }, {capture: true});
    box.addEventListener("pointerdown", (e) => {
      if (e.button !== 0 || e.pointerType === "touch") return;
      drag = {x: e.clientX, y: e.clientY, left: box.scrollLeft, top: box.scrollTop, moved: false, id: e.pointerId};
    });
    box.addEventListener("pointermove", (e) => {
      if (!drag || e.pointerId !== drag.id) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 5) return;
      if (!drag.moved) { drag.moved = true; box.classList.add("panning"); box.setPointerCapture(e.pointerId); }
      box.scrollLeft = drag.left - dx;
      box.scrollTop = drag.top - dy;
    });
    const end = () => {
      if (drag && drag.moved) {
        box.classList.remove("panning");
        swallow = performance.now() + 200; // the click that ends a drag
      }
      drag = null;
    };
    box.addEventListener("pointerup", end);
    box.addEventListener("pointercancel", end);
  }

  window.portalGraphZoom = {zoomer, wire};
})();
