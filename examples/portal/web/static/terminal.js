// gitops portal: the Pod terminal (argocd-cm exec.enabled and "exec,
// create"). A WebSocket to the portal, which bridges it to the Pod's exec
// subresource with a TTY. The screen is a plain <pre>: keys typed in it go
// to the shell (Tab too; Shift+Tab leaves), its output is shown with the
// terminal's control sequences taken out. No library, no npm.
"use strict";

(() => {
  const $ = (sel) => document.querySelector(sel);
  const MAX_SCREEN = 200000; // characters kept on screen
  const KEYS = {Enter: "\r", Backspace: "\x7f", Tab: "\t", Escape: "\x1b", ArrowUp: "\x1b[A", ArrowDown: "\x1b[B",
    ArrowRight: "\x1b[C", ArrowLeft: "\x1b[D", Home: "\x1b[H", End: "\x1b[F", Delete: "\x1b[3~"};

  // render adds the shell's output to the screen text: control sequences
  // removed, a backspace erasing, CR LF a new line.
  function render(screen, chunk) {
    let text = screen.textContent;
    const clean = chunk.replace(/\x1b\][^\x07\x1b]*(\x07|\x1b\\)/g, "").replace(/\x1b\[[0-9;?]*[ -\/]*[@-~]/g, "")
      .replace(/\x1b[()][0-9A-Za-z]|\x1b[=>]/g, "").replace(/\r\n/g, "\n").replace(/\x07/g, "");
    for (const ch of clean) {
      if (ch === "\b") text = text.slice(0, -1);
      else if (ch !== "\r") text += ch;
    }
    screen.textContent = text.length > MAX_SCREEN ? text.slice(-MAX_SCREEN) : text;
    screen.scrollTop = screen.scrollHeight;
  }

  function start() {
    const screen = $("#term-screen");
    if (!screen) return; // the terminal is off, or no "exec, create"
    const app = $("#app").dataset.app, state = $("#term-state");
    const connectB = $("#term-connect"), closeB = $("#term-disconnect");
    let ws = null;
    const send = (m) => { if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(m)); };
    const size = () => ({rows: Math.max(5, Math.floor(screen.clientHeight / 16)), cols: Math.max(20, Math.floor(screen.clientWidth / 8))});
    function disconnect() {
      if (ws) { const w = ws; ws = null; w.close(); }
      connectB.disabled = false; closeB.disabled = true;
    }
    function connect() {
      disconnect();
      const key = $("#panel-title").textContent;
      screen.textContent = "";
      state.textContent = "Connecting to " + key + "…";
      const q = new URLSearchParams({key});
      const w = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host +
        "/api/v1/apps/" + encodeURIComponent(app) + "/exec?" + q);
      w.binaryType = "arraybuffer";
      const decoder = new TextDecoder();
      let started = false;
      ws = w;
      connectB.disabled = true; closeB.disabled = false;
      w.onopen = () => send({operation: "resize", ...size()});
      w.onmessage = (m) => {
        if (typeof m.data !== "string") { render(screen, decoder.decode(m.data, {stream: true})); return; }
        const c = JSON.parse(m.data);
        if (c.operation === "shell") { started = true; state.textContent = "Connected to " + key + " (" + c.data + ")."; screen.focus(); }
        if (c.operation === "end") state.textContent = "Ended: " + c.data + ".";
      };
      w.onclose = () => {
        if (ws !== w) return;
        if (!started) state.textContent = "The terminal could not connect (refused by the portal, or the Pod is gone).";
        else if (!state.textContent.startsWith("Ended")) state.textContent = "Disconnected.";
        disconnect();
      };
    }
    screen.addEventListener("keydown", (e) => {
      if (!ws || (e.key === "Tab" && e.shiftKey)) return;
      let data = null;
      if (e.ctrlKey && !e.altKey && e.key.length === 1) data = String.fromCharCode(e.key.toUpperCase().charCodeAt(0) & 0x1f);
      else if (KEYS[e.key]) data = KEYS[e.key];
      else if (e.key.length === 1 && !e.metaKey && !e.altKey) data = e.key;
      if (data === null) return;
      e.preventDefault();
      send({operation: "stdin", data});
    });
    screen.addEventListener("paste", (e) => { e.preventDefault(); send({operation: "stdin", data: e.clipboardData.getData("text")}); });
    connectB.addEventListener("click", connect);
    closeB.addEventListener("click", disconnect);
    $("#tab-terminal").addEventListener("click", () => { if (!ws) connect(); });
    // Another node opened: the session ends.
    new MutationObserver(disconnect).observe($("#panel-title"), {childList: true, characterData: true, subtree: true});
  }
  document.addEventListener("DOMContentLoaded", start);
})();
