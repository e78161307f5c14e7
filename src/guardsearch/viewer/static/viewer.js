/* guardsearch run viewer. Hand-written, no library, nothing fetched but this server's
 * /ui/api. Routes (in the URL's hash): #/ runs, #/run/ID, #/compare/A/B.
 * Live data comes as server-sent events read with fetch (EventSource cannot send the
 * API key header; the key lives in sessionStorage only, never in a URL). */
(function () {
  "use strict";

  const BOOT = JSON.parse(document.getElementById("gs-boot").textContent);
  const STATIC = BOOT.mode === "static";
  const KEY = "guardsearch.apiKey";
  const STATUSES = ["created", "running", "paused", "succeeded", "failed", "cancelled"];
  const MAX_SHOWN = 400; // nodes drawn before the rest start folded
  const MAX_EVENT_ROWS = 500;
  const NODE_W = 132, NODE_H = 30, GAP_X = 14, GAP_Y = 56;
  const main = document.getElementById("main");
  const crumbs = document.getElementById("crumbs");
  const liveNote = document.getElementById("live");
  const SVGNS = "http://www.w3.org/2000/svg";

  // -- small helpers ---------------------------------------------------------------

  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else if (k === "class") el.className = v;
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return el;
  }
  function s(tag, attrs) {
    const el = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
    return el;
  }
  const fmt = (n) => (n === null || n === undefined ? "—" : Number(n).toLocaleString("en"));
  const num = (x, d = 2) => (x === null || x === undefined ? "—" : Number(x).toFixed(d));
  const cut = (t, n) => (t && t.length > n ? t.slice(0, n - 1) + "…" : t || "");
  const badge = (status) => h("span", { class: "badge " + status }, status || "—");
  function summarise(data) {
    const text = JSON.stringify(data || {});
    return cut(text === "{}" ? "" : text, 300);
  }

  // -- the API: the key, JSON calls, event streams -----------------------------------

  class AuthNeeded extends Error {}

  function headers() {
    const key = sessionStorage.getItem(KEY);
    return key ? { "X-API-Key": key } : {};
  }

  async function call(path, options) {
    const opts = Object.assign({}, options || {});
    opts.headers = Object.assign({ Accept: "application/json" }, headers(), opts.headers || {});
    const response = await fetch(path, opts);
    if (response.status === 401) {
      sessionStorage.removeItem(KEY);
      throw new AuthNeeded("the API key was refused");
    }
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error((body.error && body.error.message) || response.statusText);
    return body;
  }

  // Read a server-sent event stream with fetch; `onEvent(kind, data)` per event.
  async function stream(path, onEvent, signal) {
    const response = await fetch(path, { headers: Object.assign({ Accept: "text/event-stream" }, headers()), signal });
    if (response.status === 401) {
      sessionStorage.removeItem(KEY);
      throw new AuthNeeded("the API key was refused");
    }
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      throw new Error((body.error && body.error.message) || response.statusText);
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let kind = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) kind = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length) onEvent(kind, JSON.parse(data.join("\n")));
      }
    }
  }

  // -- routing -------------------------------------------------------------------------

  let current = null; // the view on screen: { stop() }

  function route() {
    if (current) current.stop();
    current = null;
    main.replaceChildren();
    setLive(false);
    if (STATIC) {
      current = runPage(null, BOOT.view);
      return;
    }
    if (BOOT.needs_key && !sessionStorage.getItem(KEY)) {
      keyForm();
      return;
    }
    const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
    if (parts[0] === "run" && parts[1]) current = runPage(parts[1], null);
    else if (parts[0] === "compare") current = comparePage(parts[1] || "", parts[2] || "");
    else current = runsPage();
  }

  function failed(error) {
    if (error instanceof AuthNeeded) {
      keyForm(error.message);
      return;
    }
    if (error && error.name === "AbortError") return;
    main.append(h("p", { class: "error", role: "alert" }, String(error && error.message ? error.message : error)));
  }

  function setLive(on, text) {
    liveNote.className = "live" + (on ? " on" : "");
    liveNote.textContent = text || (on ? "live" : "");
  }

  function keyForm(problem) {
    if (current) current.stop();
    current = null;
    crumbs.textContent = "";
    const input = h("input", { type: "password", id: "api-key", autocomplete: "off", required: true });
    const form = h(
      "form",
      { class: "keyform", onsubmit: (e) => { e.preventDefault(); sessionStorage.setItem(KEY, input.value.trim()); route(); } },
      h("h1", {}, "API key"),
      h("p", {}, "This server wants an API key. It is kept in this tab's session storage and sent as a header, never in a URL."),
      problem ? h("p", { class: "error", role: "alert" }, problem) : null,
      h("label", { for: "api-key" }, "Key "), input, " ", h("button", { type: "submit" }, "Use key"),
    );
    main.replaceChildren(form);
    input.focus();
  }

  // -- the runs list ---------------------------------------------------------------------

  function runsPage() {
    crumbs.textContent = "runs";
    document.title = "guardsearch runs";
    const controller = new AbortController();
    const filters = { status: "", app: "" };
    const drafts = {};
    let runs = [];
    const statusSelect = h("select", { id: "filter-status", onchange: () => { filters.status = statusSelect.value; draw(); } },
      h("option", { value: "" }, "any"), STATUSES.map((st) => h("option", { value: st }, st)));
    const appSelect = h("select", { id: "filter-app", onchange: () => { filters.app = appSelect.value; draw(); } }, h("option", { value: "" }, "any"));
    const pickA = h("select", { id: "compare-a", "aria-label": "first run" });
    const pickB = h("select", { id: "compare-b", "aria-label": "second run" });
    const body = h("tbody");
    const count = h("p", { class: "muted", id: "runs-count" });
    main.append(
      h("h1", {}, "Runs"),
      h("div", { class: "filters" },
        h("label", { for: "filter-status" }, "Status "), statusSelect,
        h("label", { for: "filter-app" }, "App "), appSelect,
        h("form", { class: "filters", onsubmit: (e) => { e.preventDefault(); if (pickA.value && pickB.value) location.hash = "#/compare/" + encodeURIComponent(pickA.value) + "/" + encodeURIComponent(pickB.value); } },
          h("label", { for: "compare-a" }, "Compare "), pickA, pickB, h("button", { type: "submit", id: "compare-go" }, "Compare"))),
      count,
      h("div", { class: "scroll" }, h("table", { id: "runs" },
        h("thead", {}, h("tr", {}, ["run", "status", "app", "strategy", "calls", "tokens", "termination", "created", "action"].map((c) => h("th", { class: c === "calls" || c === "tokens" ? "num" : null, scope: "col" }, c)))),
        body)),
    );

    // Refill a select, keeping its choice; `fallback` when that choice is gone.
    function options(select, values, keep, fallback) {
      const old = select.value;
      select.replaceChildren(...keep, ...values.map((v) => h("option", { value: v[0] }, v[1])));
      select.value = values.some((v) => v[0] === old) ? old : fallback;
    }

    function draw() {
      const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
      const apps = [...new Set(runs.map((r) => r.app))].sort();
      options(appSelect, apps.map((a) => [a, a]), [h("option", { value: "" }, "any")], "");
      const picks = runs.map((r) => [r.id, `${r.id} ${r.app}/${r.strategy} ${r.status}`]);
      options(pickA, picks, [], runs.length ? runs[0].id : "");
      options(pickB, picks, [], runs.length > 1 ? runs[1].id : "");
      const shown = runs.filter((r) => (!filters.status || r.status === filters.status) && (!filters.app || r.app === filters.app));
      count.textContent = `${shown.length} of ${runs.length} runs, newest first`;
      body.replaceChildren(...shown.map(row));
      if (focused) {
        const again = body.querySelector(`[data-key="${CSS.escape(focused)}"]`);
        if (again) again.focus();
      }
    }

    function row(r) {
      let action = null;
      if (r.status === "paused") {
        const input = h("input", { type: "text", "data-key": "answer-" + r.id, "aria-label": "answer for " + r.id, value: drafts[r.id] || "",
          oninput: () => { drafts[r.id] = input.value; } });
        action = h("div", {},
          h("div", { class: "question" }, r.question || "(no question)"),
          h("form", { class: "answer", onsubmit: async (e) => {
            e.preventDefault();
            try {
              await call(`/ui/api/runs/${encodeURIComponent(r.id)}/resume`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ input: input.value }) });
              delete drafts[r.id];
              setLive(true, `answered ${r.id}`);
            } catch (error) { failed(error); }
          } }, input, h("button", { type: "submit", "data-key": "answer-go-" + r.id }, "Answer")));
      } else if (r.status === "running" || r.status === "created") {
        action = r.cancel_requested ? h("span", { class: "muted" }, "cancel requested") :
          h("button", { class: "danger", "data-key": "cancel-" + r.id, onclick: async () => {
            try { await call(`/ui/api/runs/${encodeURIComponent(r.id)}/cancel`, { method: "POST" }); } catch (error) { failed(error); }
          } }, "Cancel");
      }
      // data-label: a narrow window shows each row as a card, the labels beside the values
      return h("tr", { "data-run": r.id, "data-status": r.status },
        h("td", { "data-label": "run" }, h("a", { href: "#/run/" + encodeURIComponent(r.id) }, r.id), r.name ? h("div", { class: "muted" }, r.name) : null),
        h("td", { "data-label": "status" }, badge(r.status), r.owner ? h("div", { class: "muted", title: "the worker holding the run" }, "on " + r.owner) : null), h("td", { "data-label": "app" }, r.app), h("td", { "data-label": "strategy" }, r.strategy),
        h("td", { class: "num", "data-label": "calls" }, fmt(r.calls)), h("td", { class: "num", "data-label": "tokens" }, fmt(r.tokens)),
        h("td", { "data-label": "termination" }, r.termination || "—", r.error ? h("div", { class: "error" }, cut(r.error, 160)) : null),
        h("td", { "data-label": "created" }, r.created_at), h("td", { "data-label": "action" }, action));
    }

    main.append(startForm());
    stream("/ui/api/runs/stream", (kind, data) => {
      if (kind === "runs") { runs = data; draw(); setLive(true); }
    }, controller.signal).catch(failed).finally(() => setLive(false));
    return { stop: () => controller.abort() };
  }

  // Start a durable run on the served model (POST /ui/api/runs), then watch it.
  function startForm() {
    const app = h("select", { id: "start-app" });
    const problem = h("input", { type: "text", id: "start-problem", size: 40 });
    const strategy = h("input", { type: "text", id: "start-strategy", size: 10, placeholder: "the app's" });
    const calls = h("input", { type: "text", id: "start-calls", size: 5, value: "40", inputmode: "numeric" });
    const note = h("span", { class: "muted" });
    const box = h("details", { id: "start" }, h("summary", {}, "Start a run (on the served model)"),
      h("form", { class: "filters", onsubmit: async (e) => {
        e.preventDefault();
        let parsed;
        try { parsed = JSON.parse(problem.value || "{}"); } catch (error) { note.textContent = "the problem is not JSON: " + error.message; return; }
        const body = { app: app.value, problem: parsed, budget: calls.value ? { calls: Number(calls.value) } : {} };
        if (strategy.value.trim()) body.strategy = strategy.value.trim();
        try {
          const made = await call("/ui/api/runs", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
          location.hash = "#/run/" + encodeURIComponent(made.id);
        } catch (error) { if (error instanceof AuthNeeded) failed(error); else note.textContent = error.message; }
      } },
        h("label", { for: "start-app" }, "App "), app, h("label", { for: "start-problem" }, "Problem (JSON) "), problem,
        h("label", { for: "start-strategy" }, "Strategy "), strategy, h("label", { for: "start-calls" }, "Calls "), calls,
        h("button", { type: "submit", id: "start-go" }, "Start"), note));
    let examples = {};
    app.addEventListener("change", () => { problem.value = JSON.stringify(examples[app.value] || {}); });
    call("/ui/api/apps").then((apps) => {
      examples = Object.fromEntries(apps.map((a) => [a.name, a.example]));
      app.replaceChildren(...apps.map((a) => h("option", { value: a.name, title: a.summary }, a.name)));
      problem.value = JSON.stringify(apps.length ? apps[0].example : {});
    }).catch(failed);
    return box;
  }

  // -- a run's data as it grows -----------------------------------------------------------

  class RunData {
    constructor(view) {
      this.run = view.run;
      this.nodes = new Map();
      this.children = new Map();
      this.events = view.events || [];
      this.hidden = view.hidden_events || 0;
      this.goal = view.goal || null;
      this.best = view.best || null;
      this.calls = new Map((view.calls || []).map((c) => [c.digest, c]));
      this.addNodes(view.nodes || []);
    }
    addNodes(nodes) {
      for (const n of nodes) {
        if (!this.nodes.has(n.id)) {
          const kids = this.children.get(n.parent) || [];
          kids.push(n.id);
          this.children.set(n.parent, kids);
        }
        this.nodes.set(n.id, n);
        if (n.status === "goal" && !this.goal) this.goal = n.id;
      }
    }
    addEvents(events) {
      this.events.push(...events);
      const extra = this.events.length - 20000;
      if (extra > 0) { this.events.splice(0, extra); this.hidden += extra; }
    }
    kids(id) { return this.children.get(id) || []; }
    roots() {
      return [...this.nodes.values()].filter((n) => !n.parent || !this.nodes.has(n.parent)).map((n) => n.id);
    }
    pathTo(id) {
      const path = [];
      const seen = new Set();
      while (id && this.nodes.has(id) && !seen.has(id)) { seen.add(id); path.unshift(id); id = this.nodes.get(id).parent; }
      return path;
    }
    winning() {
      let end = this.goal;
      if (!end || !this.nodes.has(end)) end = [...this.nodes.values()].find((n) => n.status === "goal")?.id || null;
      return end ? this.pathTo(end) : [];
    }
    depth() { let d = 0; for (const n of this.nodes.values()) d = Math.max(d, n.depth); return d; }
    statuses() {
      const c = {};
      for (const n of this.nodes.values()) c[n.status] = (c[n.status] || 0) + 1;
      return c;
    }
    // The key that names a node the same way in two runs: the texts from the root.
    label(id) { const n = this.nodes.get(id); return n ? (n.step || "root") + ": " + n.text : ""; }
    pathKey(id) { return this.pathTo(id).map((x) => this.label(x)).join(" \u203a "); }
  }

  // -- the tree: an SVG drawing with pan, zoom, folding and keyboard -------------------

  class TreeView {
    constructor(data, onSelect, marks) {
      this.data = data;
      this.onSelect = onSelect;
      this.marks = marks || null; // id -> extra class (compare: common / only)
      this.folded = new Map(); // id -> true (folded) / false (opened by hand)
      this.selected = null;
      this.view = { x: 20, y: 20, k: 1 };
      this.svg = s("svg", { role: "group", "aria-label": "search tree: arrow keys move, Enter opens a node, c folds, + and - zoom, 0 fits", tabindex: "0" });
      this.layer = s("g");
      this.svg.append(this.layer);
      this.note = h("div", { class: "tree-note" });
      this.box = h("div", { class: "treebox" }, this.svg, this.note);
      this.pos = new Map();
      this.dirty = true;
      this.fitted = false;
      this.bindPointer();
      this.svg.addEventListener("keydown", (e) => this.key(e));
    }

    isFolded(id) {
      const hand = this.folded.get(id);
      if (hand !== undefined) return hand;
      return this.autoFold.has(id);
    }

    // Fold by default once a tree is large: breadth first, the first MAX_SHOWN nodes are
    // drawn, the winning path always; the rest wait behind their parent's "+N".
    computeAutoFold() {
      this.autoFold = new Set();
      const d = this.data;
      if (d.nodes.size <= MAX_SHOWN) return;
      const keep = new Set(d.winning());
      const queue = d.roots();
      let shown = 0;
      for (let at = 0; at < queue.length; at += 1) {
        const id = queue[at];
        shown += 1;
        const kids = d.kids(id);
        if (!kids.length) continue;
        if (shown + kids.length > MAX_SHOWN && !keep.has(id)) { this.autoFold.add(id); continue; }
        if (shown + kids.length > MAX_SHOWN) {
          // on the path: only the path's child goes on
          const next = kids.find((k) => keep.has(k));
          if (next) queue.push(next);
          this.partial = this.partial || new Set();
          this.partial.add(id);
          continue;
        }
        queue.push(...kids);
      }
    }

    visibleKids(id) {
      if (this.isFolded(id)) return [];
      const kids = this.data.kids(id);
      if (this.partial && this.partial.has(id) && this.folded.get(id) !== false) {
        const keep = new Set(this.data.winning());
        return kids.filter((k) => keep.has(k));
      }
      return kids;
    }

    // Tidy enough: leaves left to right, a parent over the middle of its children.
    layout() {
      this.partial = null;
      this.computeAutoFold();
      this.pos = new Map();
      let next = 0;
      const place = (id, depth) => {
        const kids = this.visibleKids(id);
        let x;
        if (!kids.length) { x = next; next += 1; }
        else {
          const xs = kids.map((k) => place(k, depth + 1));
          x = (xs[0] + xs[xs.length - 1]) / 2;
        }
        this.pos.set(id, { x: x * (NODE_W + GAP_X), y: depth * (NODE_H + GAP_Y) });
        return x;
      };
      // iterative guard against very deep trees: recursion depth is the tree's depth
      for (const root of this.data.roots()) place(root, 0);
      this.width = Math.max(1, next) * (NODE_W + GAP_X);
      this.dirty = false;
    }

    // The whole tree in view; a tree too wide to read that way (unless asked: `all`)
    // opens at a readable zoom on its root, the rest a pan away.
    fit(all) {
      const rect = this.svg.getBoundingClientRect();
      if (!rect.width) return;
      let maxY = 0;
      for (const p of this.pos.values()) maxY = Math.max(maxY, p.y);
      let k = Math.min(1.2, Math.max(0.02, Math.min(rect.width / (this.width + 40), rect.height / (maxY + NODE_H + 40))));
      if (k >= 0.3 || all) this.view = { k, x: (rect.width - this.width * k) / 2, y: 20 };
      else {
        k = 0.6;
        const root = this.pos.get(this.data.roots()[0]) || { x: 0 };
        this.view = { k, x: rect.width / 2 - (root.x + NODE_W / 2) * k, y: 20 };
      }
      this.fitted = true;
      this.draw();
    }

    // A growing tree stays in view until the person moves it themselves.
    update() { this.dirty = true; if (!this.moved) this.fitted = false; this.schedule(); }

    schedule() {
      if (this.pending) return;
      this.pending = requestAnimationFrame(() => { this.pending = 0; this.draw(); });
    }

    // Draw what is in sight only: a 10,000-node tree opened wide stays responsive.
    draw() {
      if (this.dirty) this.layout();
      if (!this.fitted && this.svg.isConnected) { this.fit(); return; }
      const { x, y, k } = this.view;
      this.layer.setAttribute("transform", `translate(${x},${y}) scale(${k})`);
      const rect = this.svg.getBoundingClientRect();
      const pad = 200;
      const minX = (-x - pad) / k, maxX = (rect.width - x + pad) / k;
      const minY = (-y - pad) / k, maxY = (rect.height - y + pad) / k;
      const inSight = (p) => p.x + NODE_W >= minX && p.x <= maxX && p.y + NODE_H >= minY && p.y <= maxY;
      const onPath = new Set(this.data.winning());
      let plain = "", path = "";
      const groups = [];
      let drawn = 0;
      for (const [id, p] of this.pos) {
        const n = this.data.nodes.get(id);
        const parent = n && n.parent ? this.pos.get(n.parent) : null;
        if (parent && (inSight(p) || inSight(parent))) {
          const seg = `M${parent.x + NODE_W / 2},${parent.y + NODE_H}C${parent.x + NODE_W / 2},${parent.y + NODE_H + GAP_Y / 2} ${p.x + NODE_W / 2},${p.y - GAP_Y / 2} ${p.x + NODE_W / 2},${p.y}`;
          if (onPath.has(id) && onPath.has(n.parent)) path += seg; else plain += seg;
        }
        if (!inSight(p) || !n) continue;
        drawn += 1;
        groups.push(this.nodeShape(n, p, onPath.has(id)));
      }
      const edges = [s("path", { class: "edge", d: plain || "M0,0" }), s("path", { class: "edge path", d: path || "M0,0" })];
      const focused = this.svg.contains(document.activeElement) && document.activeElement !== this.svg ? document.activeElement.dataset.id : null;
      const hadFocus = this.focusId || focused;
      this.focusId = null;
      this.layer.replaceChildren(...edges, ...groups);
      if (hadFocus) {
        const again = this.layer.querySelector(`[data-id="${CSS.escape(hadFocus)}"]`);
        if (again) again.focus({ preventScroll: true });
      }
      const total = this.data.nodes.size;
      this.note.textContent = `${total} nodes, ${this.pos.size} unfolded, ${drawn} in sight · zoom ${Math.round(k * 100)}%`;
    }

    nodeShape(n, p, onPath) {
      const kids = this.data.kids(n.id).length;
      const shown = this.visibleKids(n.id).length;
      const mark = this.marks ? this.marks(n.id) : "";
      const g = s("g", {
        class: `node ${n.status}${onPath ? " path" : ""}${n.id === this.selected ? " selected" : ""}${mark ? " " + mark : ""}`,
        transform: `translate(${p.x},${p.y})`, tabindex: "0", role: "button", "data-id": n.id,
        "aria-label": `${n.step || "root"} ${cut(n.text, 60)}, ${n.status}${kids ? `, ${kids} children` : ""}`,
      });
      g.append(s("rect", { width: NODE_W, height: NODE_H }));
      const t1 = s("text", { x: 6, y: 12 });
      t1.textContent = cut(n.step || "root", 14) + (n.verdict && n.verdict.score !== null && n.verdict.score !== undefined ? ` ${num(n.verdict.score)}` : "");
      const t2 = s("text", { x: 6, y: 25 });
      t2.textContent = cut(n.text.replace(/\s+/g, " "), 21);
      g.append(t1, t2);
      if (kids > shown) {
        const f = s("text", { class: "fold", x: NODE_W - 4, y: NODE_H + 11, "text-anchor": "end" });
        f.textContent = `+${kids - shown}`;
        g.append(f);
      }
      const title = s("title");
      title.textContent = `${n.id} · ${n.status}\n${n.text}`;
      g.append(title);
      return g;
    }

    toggle(id) {
      const folded = this.isFolded(id) || this.visibleKids(id).length < this.data.kids(id).length;
      this.folded.set(id, !folded);
      this.update();
    }

    select(id, focus) {
      this.selected = id;
      const p = this.pos.get(id);
      if (p && focus) {
        this.moved = true;
        this.reveal(p);
        // Focus now (the next key goes to this node), and again after the redraw if
        // the node was out of sight until then.
        this.focusId = id;
        const el = this.layer.querySelector(`[data-id="${CSS.escape(id)}"]`);
        if (el) el.focus({ preventScroll: true });
      }
      this.schedule();
      this.onSelect(id);
    }

    reveal(p) {
      const rect = this.svg.getBoundingClientRect();
      const { x, y, k } = this.view;
      const sx = p.x * k + x, sy = p.y * k + y;
      if (sx < 0 || sy < 0 || sx + NODE_W * k > rect.width || sy + NODE_H * k > rect.height) {
        this.view.x = rect.width / 2 - (p.x + NODE_W / 2) * k;
        this.view.y = rect.height / 2 - (p.y + NODE_H / 2) * k;
      }
    }

    zoom(factor, cx, cy) {
      const rect = this.svg.getBoundingClientRect();
      cx = cx === undefined ? rect.width / 2 : cx;
      cy = cy === undefined ? rect.height / 2 : cy;
      this.moved = true;
      const k = Math.min(4, Math.max(0.02, this.view.k * factor));
      this.view.x = cx - ((cx - this.view.x) * k) / this.view.k;
      this.view.y = cy - ((cy - this.view.y) * k) / this.view.k;
      this.view.k = k;
      this.schedule();
    }

    bindPointer() {
      let drag = null;
      this.svg.addEventListener("pointerdown", (e) => {
        if (e.button !== 0) return;
        drag = { x: e.clientX, y: e.clientY, vx: this.view.x, vy: this.view.y, moved: false };
      });
      this.svg.addEventListener("pointermove", (e) => {
        if (!drag) return;
        const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
        if (!drag.moved) { drag.moved = true; this.moved = true; this.svg.setPointerCapture(e.pointerId); }
        this.view.x = drag.vx + dx;
        this.view.y = drag.vy + dy;
        this.schedule();
      });
      const end = (e) => {
        if (drag && !drag.moved) {
          const g = e.target.closest && e.target.closest("g.node");
          if (g) this.select(g.dataset.id, false);
        }
        drag = null;
      };
      this.svg.addEventListener("pointerup", end);
      this.svg.addEventListener("pointercancel", () => { drag = null; });
      this.svg.addEventListener("dblclick", (e) => {
        const g = e.target.closest && e.target.closest("g.node");
        if (g) this.toggle(g.dataset.id);
      });
      this.svg.addEventListener("wheel", (e) => {
        e.preventDefault();
        const rect = this.svg.getBoundingClientRect();
        this.zoom(e.deltaY < 0 ? 1.15 : 1 / 1.15, e.clientX - rect.left, e.clientY - rect.top);
      }, { passive: false });
    }

    key(e) {
      const id = e.target.dataset ? e.target.dataset.id : null;
      const d = this.data;
      const move = (to) => { if (to) { e.preventDefault(); this.select(to, true); } };
      if (e.key === "+" || e.key === "=") { e.preventDefault(); this.zoom(1.25); return; }
      if (e.key === "-") { e.preventDefault(); this.zoom(0.8); return; }
      if (e.key === "0") { e.preventDefault(); this.fit(true); return; }
      if (!id) {
        if (e.key.startsWith("Arrow") || e.key === "Enter") move(this.selected || d.roots()[0]);
        return;
      }
      const n = d.nodes.get(id);
      const siblings = d.kids(n.parent);
      const at = siblings.indexOf(id);
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); this.select(id, true); }
      else if (e.key === "c") { e.preventDefault(); this.toggle(id); }
      else if (e.key === "ArrowUp") move(n.parent && d.nodes.has(n.parent) ? n.parent : null);
      else if (e.key === "ArrowDown") { if (this.isFolded(id)) this.toggle(id); move(this.visibleKids(id)[0] || d.kids(id)[0]); }
      else if (e.key === "ArrowLeft") move(at > 0 ? siblings[at - 1] : null);
      else if (e.key === "ArrowRight") move(at >= 0 && at < siblings.length - 1 ? siblings[at + 1] : null);
    }
  }

  // -- one node's details -------------------------------------------------------------

  function verdictBlock(v) {
    if (!v) return h("p", { class: "muted" }, "Not judged yet.");
    return h("div", { class: "verdict " + (v.passed ? "pass" : "fail") },
      h("div", {}, h("b", {}, v.guard || "guard"), " ", v.passed ? "passed" : "failed", v.fatal ? " (fatal)" : "", " · score ", num(v.score)),
      v.feedback ? h("div", { class: "feedback" }, v.feedback) : null,
      v.ask ? h("div", { class: "question" }, "asks: " + v.ask) : null,
      v.checks && v.checks.length ? h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "check"), h("th", {}, "result"), h("th", { class: "num" }, "weight"), h("th", {}, "feedback"))),
        h("tbody", {}, v.checks.map((c) => h("tr", {}, h("td", {}, c.name), h("td", {}, c.passed ? "pass" : "fail", c.hard ? " (hard)" : ""), h("td", { class: "num" }, num(c.weight, 1)), h("td", { class: "feedback" }, c.feedback))))) : null);
  }

  function callBlock(c, title) {
    return h("details", { class: "call" }, h("summary", {}, title, c.usage && c.usage.completion_tokens !== undefined ? ` · ${fmt(c.usage.prompt_tokens)} + ${fmt(c.usage.completion_tokens)} tokens` : ""),
      c.messages.map((m) => h("div", {}, h("b", {}, m.role), h("pre", { class: "text" }, m.content))),
      h("b", {}, "output"), h("pre", { class: "text" }, c.text));
  }

  function nodeDetails(data, id, runId) {
    const n = data.nodes.get(id);
    const box = h("section", { class: "details", id: "node-details", "aria-live": "polite", tabindex: "-1" });
    if (!n) { box.append(h("p", { class: "muted" }, "Click a node (or focus the tree and use the arrow keys) to see its prompt, output and verdicts.")); return box; }
    const events = data.events.filter((e) => e.node === id || (e.node || "").startsWith(id + "-repair"));
    const verdicts = events.filter((e) => e.kind === "guard_verdict");
    const repairs = events.filter((e) => e.kind === "patch_applied");
    const calls = data.events.filter((e) => e.kind === "model_call" && (e.node === id || (n.parent && e.node === n.parent)));
    const tokens = calls.reduce((a, e) => a + (e.data.prompt_tokens || 0) + (e.data.completion_tokens || 0), 0);
    box.append(...[
      h("h2", {}, "Node ", n.id, " ", badge(n.status)),
      h("dl", {},
        h("dt", {}, "step"), h("dd", {}, n.step || "root"), h("dt", {}, "depth"), h("dd", {}, n.depth),
        h("dt", {}, "g / h"), h("dd", {}, num(n.g), " / ", num(n.h)),
        h("dt", {}, "attempt"), h("dd", {}, n.attempt ?? "—"), h("dt", {}, "expansions"), h("dd", {}, n.expansions),
        h("dt", {}, "usage"), h("dd", {}, `${calls.length} model calls, ${fmt(tokens)} tokens (this node's and its proposal's)`)),
      h("h3", {}, "Output"), h("pre", { class: "text", id: "node-text" }, n.text || "(none)"),
      n.parse_error ? h("p", { class: "error" }, "parse error: " + n.parse_error) : null,
      h("h3", {}, "Verdict"), verdictBlock(n.verdict),
      verdicts.length ? h("div", {}, h("h3", {}, `Guard verdicts (${verdicts.length})`),
        verdicts.map((e) => h("div", { class: "verdict " + (e.data.passed ? "pass" : "fail") },
          h("b", {}, e.data.guard || "guard"), ` ${e.data.stage || ""} `, e.data.passed ? "passed" : "failed", " · score ", num(e.data.score),
          e.data.feedback ? h("div", { class: "feedback" }, e.data.feedback) : null))) : null,
      n.history && n.history.length ? h("div", {}, h("h3", {}, "Feedback it was given"), h("ul", {}, n.history.map((f) => h("li", { class: "feedback" }, f)))) : null,
      repairs.length ? h("div", {}, h("h3", {}, `Repairs (${repairs.length})`), repairs.map((e) => h("div", { class: "verdict " + (e.data.passed ? "pass" : "fail") }, e.data.passed ? "fixed: " : "not fixed: ", e.data.fixed || "", h("pre", { class: "text" }, JSON.stringify(e.data.patch, null, 1))))) : null,
    ].filter(Boolean));
    const prompts = h("div", {}, h("h3", {}, "Prompts"));
    box.append(prompts);
    const showCalls = (proposed, expanded) => {
      if (!proposed.length && !expanded.length) prompts.append(h("p", { class: "muted" }, "No paid model call is kept for this node."));
      proposed.forEach((c, i) => prompts.append(callBlock(c, `call that proposed it (${i + 1})`)));
      expanded.forEach((c, i) => prompts.append(callBlock(c, `call that expanded it (${i + 1})`)));
    };
    if (STATIC) {
      const pick = (who) => calls.filter((e) => e.node === who).map((e) => data.calls.get(e.data.digest)).filter(Boolean);
      showCalls(n.parent ? pick(n.parent) : [], pick(id));
    } else {
      call(`/ui/api/runs/${encodeURIComponent(runId)}/nodes/${encodeURIComponent(id)}`).then((r) => showCalls(r.proposed_by, r.expanded_with)).catch(failed);
    }
    box.append(h("h3", {}, `Events of this node (${events.length})`), eventTable(events, null));
    return box;
  }

  function eventTable(events, onNode) {
    const start = events.length ? events[0].at : 0;
    const rows = events.slice(-MAX_EVENT_ROWS).map((e) => h("tr", { "data-kind": e.kind },
      h("td", { class: "num" }, e.seq), h("td", { class: "num" }, (e.at - start).toFixed(2)), h("td", {}, e.kind), h("td", {}, e.step || ""),
      h("td", {}, e.node && onNode ? h("a", { href: "#", onclick: (ev) => { ev.preventDefault(); onNode(e.node); } }, e.node) : e.node || ""),
      h("td", { class: "data" }, summarise(e.data))));
    return h("div", { class: "scroll" }, h("table", { class: "events" },
      h("thead", {}, h("tr", {}, ["#", "t (s)", "kind", "step", "node", "data"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows)));
  }

  // -- the run page ----------------------------------------------------------------------

  function budgetOf(run) { return (run.spec && run.spec.budget) || {}; }

  function meter(label, used, limit) {
    const share = limit ? Math.min(1, used / limit) : 0;
    return h("div", {}, h("b", {}, label), `${fmt(used)}${limit ? " / " + fmt(limit) : ""}`,
      limit ? h("div", { class: "meter" + (used > limit ? " over" : ""), role: "meter", "aria-label": label, "aria-valuemin": 0, "aria-valuemax": limit, "aria-valuenow": used }, h("span", { style: `width:${(share * 100).toFixed(1)}%` })) : null);
  }

  function runSummary(data, id) {
    const r = data.run;
    const b = budgetOf(r);
    const counts = data.statuses();
    const box = h("div", {},
      h("h1", {}, "Run ", r.id, r.name ? " — " + r.name : "", " ", badge(r.status)),
      h("div", { class: "summary", id: "run-summary" },
        h("div", {}, h("b", {}, "app / strategy"), `${r.app} / ${r.strategy}`),
        meter("calls", r.calls, b.calls), meter("tokens", r.tokens, b.tokens),
        h("div", {}, h("b", {}, "termination"), r.termination || "—"),
        h("div", {}, h("b", {}, "nodes"), `${data.nodes.size} · expansions ${fmt(r.expansions)} · depth ${data.depth()}`),
        h("div", {}, h("b", {}, "by status"), Object.entries(counts).map(([k, v]) => [badge(`${k}`), ` ${v} `])),
        h("div", {}, h("b", {}, "created"), r.created_at),
        r.status === "running" && r.owner ? h("div", {}, h("b", {}, "worker"), r.owner) : null,
        r.result && r.result.answer !== undefined ? h("div", {}, h("b", {}, "answer"), String(r.result.answer)) : null),
      r.error ? h("p", { class: "error" }, r.error) : null);
    if (!STATIC && r.status === "paused") {
      const input = h("input", { type: "text", id: "answer-input", "aria-label": "answer" });
      box.append(h("div", { class: "verdict" }, h("div", { class: "question" }, "Waiting for a person: ", r.question || ""),
        h("form", { class: "answer", onsubmit: async (e) => {
          e.preventDefault();
          try { await call(`/ui/api/runs/${encodeURIComponent(id)}/resume`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ input: input.value }) }); } catch (error) { failed(error); }
        } }, input, h("button", { type: "submit" }, "Answer"))));
    } else if (!STATIC && (r.status === "running" || r.status === "created") && !r.cancel_requested) {
      box.append(h("button", { class: "danger", id: "cancel-run", onclick: async () => {
        try { await call(`/ui/api/runs/${encodeURIComponent(id)}/cancel`, { method: "POST" }); } catch (error) { failed(error); }
      } }, "Cancel run"));
    }
    return box;
  }

  function runPage(id, view) {
    const controller = new AbortController();
    let data = null, tree = null, selected = null;
    const head = h("div", { id: "run-head" });
    const detailSlot = h("div", { class: "detail-slot" });
    const kindSelect = h("select", { id: "event-kind", onchange: () => drawEvents() }, h("option", { value: "" }, "all kinds"));
    const eventsSlot = h("div", { class: "eventsbox", id: "events" });
    const toolbar = h("div", { class: "toolbar" });
    const layout = h("div", { class: "layout" }, h("div", {}, toolbar, h("div", { id: "tree-slot" })), detailSlot);
    main.append(head, h("h2", {}, "Search tree"), layout,
      h("h2", {}, "Events"), h("div", { class: "filters" }, h("label", { for: "event-kind" }, "Kind "), kindSelect, h("span", { class: "muted", id: "events-count" })), eventsSlot);

    function showNode(nodeId) {
      selected = nodeId;
      detailSlot.replaceChildren(nodeDetails(data, nodeId, data.run.id));
    }
    function drawEvents() {
      const kinds = [...new Set(data.events.map((e) => e.kind))].sort();
      const old = kindSelect.value;
      kindSelect.replaceChildren(h("option", { value: "" }, "all kinds"), ...kinds.map((k) => h("option", { value: k }, k)));
      kindSelect.value = kinds.includes(old) ? old : "";
      const shown = data.events.filter((e) => !kindSelect.value || e.kind === kindSelect.value);
      document.getElementById("events-count").textContent = `${data.events.length + data.hidden} events${shown.length > MAX_EVENT_ROWS ? `, the last ${MAX_EVENT_ROWS} of ${shown.length} shown` : ""}${data.hidden ? ` (${data.hidden} earliest not loaded)` : ""}`;
      const atEnd = eventsSlot.scrollTop + eventsSlot.clientHeight >= eventsSlot.scrollHeight - 20;
      eventsSlot.replaceChildren(eventTable(shown, (n) => tree.select(n, true)));
      if (atEnd) eventsSlot.scrollTop = eventsSlot.scrollHeight;
    }
    function start(v) {
      data = new RunData(v);
      crumbs.textContent = "run " + data.run.id;
      document.title = "Run " + data.run.id;
      tree = new TreeView(data, showNode);
      toolbar.replaceChildren(
        h("button", { onclick: () => tree.zoom(1.25), "aria-label": "zoom in" }, "+"),
        h("button", { onclick: () => tree.zoom(0.8), "aria-label": "zoom out" }, "−"),
        h("button", { onclick: () => tree.fit(true) }, "Fit"),
        h("button", { onclick: () => { for (const nid of data.nodes.keys()) tree.folded.set(nid, false); tree.update(); } }, "Unfold all"),
        h("button", { onclick: () => { tree.folded.clear(); tree.update(); tree.fit(); } }, "Fold to default"),
        h("button", { onclick: () => { const w = data.winning(); if (w.length) tree.select(w[w.length - 1], true); } }, "Go to answer"));
      document.getElementById("tree-slot").replaceChildren(tree.box);
      head.replaceChildren(runSummary(data, data.run.id));
      showNode(null);
      drawEvents();
      tree.draw();
      performance.mark("gs-tree-drawn"); // benchmarks/viewer_large.py reads it
      if (!STATIC) setLive(true);
    }
    function apply(update) {
      data.run = update.run;
      data.addNodes(update.nodes);
      data.addEvents(update.events);
      const focusInHead = head.contains(document.activeElement);
      if (!focusInHead) head.replaceChildren(runSummary(data, data.run.id));
      if (update.nodes.length) tree.update();
      if (update.events.length) drawEvents();
      if (selected && update.nodes.some((n) => n.id === selected)) showNode(selected);
    }
    if (view) start(view);
    else {
      stream(`/ui/api/runs/${encodeURIComponent(id)}/stream`, (kind, payload) => {
        if (kind === "snapshot") start(payload);
        else if (kind === "update" && data) apply(payload);
      }, controller.signal).catch(failed).finally(() => setLive(false));
    }
    const onResize = () => tree && tree.schedule();
    window.addEventListener("resize", onResize);
    return { stop: () => { controller.abort(); window.removeEventListener("resize", onResize); } };
  }

  // -- two runs side by side ---------------------------------------------------------------

  function comparePage(a, b) {
    const controller = new AbortController();
    crumbs.textContent = `compare ${a} · ${b}`;
    document.title = `Compare ${a} and ${b}`;
    const runs = [null, null];
    const trees = [null, null];
    const table = h("div", { id: "compare-table" });
    const diverge = h("div", { id: "divergence" });
    const panes = [h("section", {}), h("section", {})];
    main.append(h("h1", {}, "Compare runs"), table, diverge, h("div", { class: "compare" }, panes));
    let keys = [new Map(), new Map()];

    function draw() {
      if (!runs[0] || !runs[1]) return;
      keys = runs.map((d) => { const m = new Map(); for (const nid of d.nodes.keys()) m.set(d.pathKey(nid), nid); return m; });
      const common = [...keys[0].keys()].filter((k) => keys[1].has(k)).length;
      const row = (label, f) => {
        const [x, y] = runs.map(f);
        return h("tr", { class: String(x) !== String(y) ? "diff" : null }, h("th", { scope: "row" }, label), h("td", {}, x), h("td", {}, y));
      };
      const elapsed = (d) => (d.events.length ? (d.events[d.events.length - 1].at - d.events[0].at).toFixed(1) + " s" : "—");
      table.replaceChildren(h("div", { class: "scroll" }, h("table", {},
        h("thead", {}, h("tr", {}, h("th", {}, ""), runs.map((d) => h("th", { scope: "col" }, h("a", { href: "#/run/" + encodeURIComponent(d.run.id) }, d.run.id))))),
        h("tbody", {},
          row("status", (d) => d.run.status), row("app", (d) => d.run.app), row("strategy", (d) => d.run.strategy),
          row("calls", (d) => fmt(d.run.calls)), row("tokens", (d) => fmt(d.run.tokens)),
          row("nodes", (d) => d.nodes.size), row("depth", (d) => d.depth()), row("expansions", (d) => fmt(d.run.expansions)),
          row("termination", (d) => d.run.termination || "—"), row("answer", (d) => (d.run.result && d.run.result.answer !== undefined ? String(d.run.result.answer) : "—")),
          row("elapsed", elapsed),
          row("nodes only here", (d) => d.nodes.size - common)))));
      // Where they diverged: the first step at which the winning (or best) paths differ.
      const paths = runs.map((d) => { const w = d.winning(); return w.length ? w : d.pathTo(d.best); });
      let at = 0;
      while (at < paths[0].length && at < paths[1].length && runs[0].label(paths[0][at]) === runs[1].label(paths[1][at])) at += 1;
      const said = (i) => (paths[i][at] ? runs[i].label(paths[i][at]) : "(its path ends here)");
      diverge.replaceChildren(h("h2", {}, "Where they diverged"),
        at === paths[0].length && at === paths[1].length
          ? h("p", {}, `Their paths are the same (${at} nodes).`)
          : h("p", {}, `The paths share ${at} node${at === 1 ? "" : "s"} from the root, then differ at depth ${at}: `,
            h("b", {}, runs[0].run.id), " took ", h("code", {}, said(0)), "; ", h("b", {}, runs[1].run.id), " took ", h("code", {}, said(1)), "."),
        h("p", { class: "muted" }, `${common} nodes are in both trees (same texts from the root); dashed nodes are in one tree only.`));
      runs.forEach((d, i) => {
        if (!trees[i]) {
          trees[i] = new TreeView(d, (nid) => {
            panes[i].querySelector(".detail-slot").replaceChildren(nodeDetails(d, nid, d.run.id));
          }, (nid) => (keys[1 - i].has(d.pathKey(nid)) ? "common" : "only"));
          panes[i].replaceChildren(h("h2", {}, d.run.id, " ", badge(d.run.status), ` ${d.run.strategy}`), trees[i].box, h("div", { class: "detail-slot" }));
          trees[i].draw();
        } else trees[i].update();
      });
    }

    if (!a || !b) {
      main.append(h("p", {}, "Pick two runs on the ", h("a", { href: "#/" }, "runs list"), "."));
      return { stop: () => {} };
    }
    [a, b].forEach((rid, i) => {
      stream(`/ui/api/runs/${encodeURIComponent(rid)}/stream`, (kind, payload) => {
        if (kind === "snapshot") { runs[i] = new RunData(payload); draw(); setLive(true); }
        else if (kind === "update" && runs[i]) {
          runs[i].run = payload.run; runs[i].addNodes(payload.nodes); runs[i].addEvents(payload.events);
          if (payload.nodes.length || payload.events.length) draw();
        }
      }, controller.signal).catch(failed);
    });
    return { stop: () => controller.abort() };
  }

  window.addEventListener("hashchange", route);
  route();
})();
