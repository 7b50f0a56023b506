// barkbus profiler page: one WebSocket, JSON messages (see audio/live/profiler/sources.py).
// No library: canvas for the timeline and the map, plain DOM for tables and meters.
"use strict";

const S = {
  mode: "", game: "", actions: [], decisions: [], bars: [], snap: null, panels: [],
  follow: true, span: 20, end: 0, now: 0, duration: 0, selected: -1, games: new Set(),
  rows: new Map(), rowOrder: [], playing: false, shown: [], refilter: false, nBars: 0,
};
const CLS_COLOUR = { refused: "#e0524a", cut: "#e8913a", state: "#4a90d9", other: "#9aa0a8" };
const SLOT_COLOUR = ["#4C72B0", "#55A868", "#8172B2", "#CCB974", "#64B5CD", "#8C8C8C", "#DD8452", "#937860"];
const ROW_H = 30, LABEL_W = 120, MIN_WAIT = 0.1, MAX_ROWS = 14;
const KEEP = 20000;  // decisions the page keeps to scroll back through (and bars and marks per row)
const TR_PX = 19;  // the height of a table row (fixed in the style): tables draw only the rows in view
const $ = (id) => document.getElementById(id);
let ws = null;

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
}
const fmtDb = (v) => (v === null || v === undefined ? "-inf" : v.toFixed(1));
const dbFrac = (v) => (v === null || v === undefined ? 0 : Math.max(0, Math.min(1, (v + 60) / 60)));

// -- connection ------------------------------------------------------------------------------
function connect() {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  ws = new WebSocket(`${proto}://${location.host}/ws${location.search}`);
  ws.onopen = () => { $("conn").textContent = "connected"; $("conn").className = "tag good"; };
  ws.onclose = () => {
    $("conn").textContent = "offline"; $("conn").className = "tag bad";
    setTimeout(connect, 1000);
  };
  ws.onmessage = (ev) => handle(JSON.parse(ev.data));
}
function send(obj) { if (ws && ws.readyState === 1) ws.send(JSON.stringify(obj)); }

function handle(m) {
  if (m.type === "hello") {
    S.mode = m.mode; S.game = m.game; S.actions = m.actions || []; S.duration = m.duration || 0;
    S.decisions = []; S.shown = []; S.nBars = 0; S.rows = new Map(); S.rowOrder = []; drawDecisions(true);
    $("mode").textContent = m.mode === "live" ? "live" : "finished run";
    $("game").textContent = `game ${m.game}` + (m.note ? ` (${m.note})` : "");
    buildActions();
    $("control-box").hidden = m.mode !== "live";
    $("review-controls").hidden = m.mode !== "review";
    if (m.mode === "review") { $("seek").max = S.duration; $("seek").value = S.duration; S.now = S.duration; }
  } else if (m.type === "tick") {
    // only the state changes here; the drawing waits for the next animation frame (none while
    // the tab is hidden), and several updates arriving between two frames are drawn once
    for (const d of m.decisions || []) addDecision(d);
    for (const b of m.bars || []) addBar(b);
    if (m.snap) { S.snap = m.snap; if (S.mode === "live") S.now = m.snap.t; dirty.snap = true; }
    if (m.panels) { S.panels = m.panels; dirty.panels = true; }
    if (m.metrics) { S.metrics = m.metrics; dirty.metrics = true; }
    if ((m.decisions || []).length) dirty.decisions = true;
    markDirty();
  } else if (m.type === "result") {
    const r = $("result"); r.textContent = m.text; r.className = m.ok ? "good" : "bad";
  }
}

// -- rows ------------------------------------------------------------------------------------
function natural(a, b) {
  const na = Number(a), nb = Number(b);
  if (a !== "" && b !== "" && !isNaN(na) && !isNaN(nb)) return na - nb;
  if (a === "") return -1; if (b === "") return 1;
  return a.localeCompare(b);
}
function rowFor(game, speaker) {
  const key = `${game}\u0000${speaker}`;
  let r = S.rows.get(key);
  if (!r) {
    r = { key, game, speaker, label: speaker ? `${game} ${speaker}` : `${game} (all)`, bars: [], starts: [], marks: [], queued: [] };
    S.rows.set(key, r);
    if (!S.games.has(game)) { S.games.add(game); $("f-game").append(el("option", { value: game, text: game })); }
    const games = [...S.games];
    S.rowOrder = [...S.rows.values()].sort((x, y) =>
      games.indexOf(x.game) - games.indexOf(y.game) || natural(x.speaker, y.speaker));
  }
  return r;
}
function trim(list) { if (list.length > KEEP + KEEP / 4) list.splice(0, list.length - KEEP); }
function addDecision(d) {
  S.decisions.push(d);
  if (S.decisions.length > KEEP + KEEP / 4) { S.decisions.splice(0, S.decisions.length - KEEP); S.refilter = true; }
  else if (passes(d)) S.shown.push(d);
  if (d.outcome === "Queued" && d.speaker) { const r = rowFor(d.game, d.speaker); r.queued.push(d.t); trim(r.queued); }
  if (d.cls === "quiet" || (!d.speaker && d.cls === "other")) return;
  const r = rowFor(d.game, d.speaker); r.marks.push(d); trim(r.marks);
}
// a row's bars arrive as voices end: in order of their end (t1); starts are kept sorted apart
function insertSorted(list, x) {
  let i = list.length;
  while (i > 0 && list[i - 1] > x) i--;
  list.splice(i, 0, x);
}
function addBar(b) {
  S.nBars++;
  const r = rowFor(b.system, b.speaker); r.bars.push(b); insertSorted(r.starts, b.t0);
  if (r.bars.length > KEEP + KEEP / 4) { r.bars.splice(0, r.bars.length - KEEP); r.starts.splice(0, r.starts.length - KEEP); }
}
function lowerBound(list, x, key) {  // the first index whose key is >= x (list sorted by key)
  let lo = 0, hi = list.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (key(list[mid]) < x) lo = mid + 1; else hi = mid; }
  return lo;
}

// -- timeline --------------------------------------------------------------------------------
function view() {
  const end = S.follow ? S.now : S.end;
  return [Math.max(0, end - S.span), Math.max(end, S.span)];
}
function niceStep(span) {
  const raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (raw <= m * p) return m * p;
  return 10 * p;
}
// The timeline is drawn incrementally while it follows the present: the picture so far is moved
// left by the time that passed and only the strip from LATE seconds before the last drawn
// present is drawn again (decisions, bar ends and snapshots arrive a little after the fact).
// Anything else (zoom, scrolling, rows, selection, size) draws it whole. Either way, each row
// looks only at what is in view: bars from the first that ends in it (bars are kept in order of
// their end), marks and queue waits from the first in it (kept in order of time).
const LATE = 1.0, WHOLE_MS = 5000;  // and the whole timeline at least every 5 s
let TL = null;  // what the canvas shows: { w, h, t0, t1, key, sel, rows }
function drawTimeline(whole) {
  const c = $("timeline"), box = $("timeline-scroll");
  // the canvas is only as tall as the rows shown; the wheel scrolls the rows (S.rowTop),
  // shift/ctrl + wheel scroll/zoom time
  const visible = Math.max(1, Math.min(S.rowOrder.length, MAX_ROWS));
  S.rowTop = Math.max(0, Math.min(S.rowTop || 0, S.rowOrder.length - visible));
  const rows = S.rowOrder.slice(S.rowTop, S.rowTop + visible);
  const w = Math.max(300, box.clientWidth), h = visible * ROW_H + 22;
  const dpr = window.devicePixelRatio || 1;
  if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) {
    c.width = Math.round(w * dpr); c.height = Math.round(h * dpr); c.style.height = `${h}px`;
  }
  const g = c.getContext("2d");
  let [t0, t1] = view();
  const span = t1 - t0, pxs = (w - LABEL_W - 4) / span, x = (t) => LABEL_W + (t - t0) * pxs;
  const key = rows.map((r) => r.key).join("\u0001"), now = performance.now();
  let from = t0;
  if (!whole && TL && TL.w === w && TL.h === h && TL.key === key && TL.sel === S.selected &&
      Math.abs(TL.t1 - TL.t0 - span) < 1e-9 && t0 >= TL.t0 && TL.now - LATE > t0 && now - TL.at < WHOLE_MS) {
    // move the picture by whole device pixels (no blur) and take the view start it then shows
    const dx = Math.round((t0 - TL.t0) * pxs * dpr);
    t0 = TL.t0 + dx / (dpr * pxs); t1 = t0 + span;
    if (dx > 0) {
      g.setTransform(1, 0, 0, 1, 0, 0);
      const left = Math.round(LABEL_W * dpr);
      g.drawImage(c, left + dx, 0, c.width - left - dx, c.height, left, 0, c.width - left - dx, c.height);
    }
    from = Math.max(t0, TL.now - LATE);
  }
  TL = { w, h, t0, t1, key, sel: S.selected, rows, now: S.now, at: from === t0 ? now : TL.at };
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  const xf = from > t0 ? Math.floor(x(from)) : 0;
  g.save(); g.beginPath(); g.rect(xf, 0, w - xf, h); g.clip();
  g.fillStyle = "#181a1f"; g.fillRect(xf, 0, w - xf, h);
  g.font = "11px ui-monospace, monospace"; g.textBaseline = "middle";
  const step = niceStep(t1 - t0);
  g.strokeStyle = "#2a2e36"; g.fillStyle = "#8a93a3";
  for (let t = Math.ceil((from - step) / step) * step; t <= t1; t += step) {
    if (t < t0) continue;
    const xx = x(t); g.beginPath(); g.moveTo(xx, 14); g.lineTo(xx, h); g.stroke();
    g.fillText(`${+t.toFixed(3)} s`, xx + 2, 7);
  }
  const live = new Map();  // the voices playing, by row
  if (S.snap) for (const v of S.snap.voices) {
    const k = `${v.system}\u0000${v.speaker}`;
    if (!live.has(k)) live.set(k, []);
    live.get(k).push(v);
  }
  rows.forEach((r, i) => {
    const y = 16 + i * ROW_H;
    g.fillStyle = i % 2 ? "#1b1e23" : "#1f2228"; g.fillRect(xf, y, w - xf, ROW_H);
    if (xf < LABEL_W) {
      g.fillStyle = "#d8dde6"; g.save(); g.beginPath(); g.rect(0, y, LABEL_W - 4, ROW_H); g.clip();
      g.fillText(r.label, 4, y + ROW_H / 2); g.restore();
    }
    const bars = [];
    for (let k = lowerBound(r.bars, from, (b) => b.t1); k < r.bars.length; k++) if (r.bars[k].t0 <= t1) bars.push(r.bars[k]);
    const open = [];
    for (const v of live.get(r.key) || []) open.push({ t0: v.t0, t1: S.now, clip: v.clip, take: v.take, slot: v.slot, open: true });
    const openStarts = open.map((b) => b.t0).sort((a, b) => a - b);
    const nextStart = (q) => {
      const k = lowerBound(r.starts, q, (v) => v), j = lowerBound(openStarts, q, (v) => v);
      return Math.min(k < r.starts.length ? r.starts[k] : Infinity, j < openStarts.length ? openStarts[j] : Infinity);
    };
    g.save(); g.beginPath(); g.rect(Math.max(LABEL_W, xf), y, w - Math.max(LABEL_W, xf), ROW_H); g.clip();
    // queue waits: from a Queued decision to the next bar start on the row
    g.strokeStyle = "#c8b14a"; g.lineWidth = 2;
    for (let k = lowerBound(r.queued, t0 - S.span, (v) => v); k < r.queued.length && r.queued[k] <= t1; k++) {
      const q = r.queued[k], st = nextStart(q);
      if (st !== Infinity && st - q >= MIN_WAIT && st >= from) {
        g.beginPath(); g.moveTo(x(q), y + 9); g.lineTo(x(st), y + 9); g.stroke();
      }
    }
    g.lineWidth = 1;
    for (const b of bars.concat(open)) {
      const xa = Math.max(LABEL_W, x(b.t0)), xb = Math.max(xa + 2, x(b.t1));
      g.fillStyle = SLOT_COLOUR[(b.slot || 0) % SLOT_COLOUR.length];
      g.globalAlpha = b.open ? 1 : 0.85; g.fillRect(xa, y + 3, xb - xa, 12); g.globalAlpha = 1;
      if (xb - xa > 24) {
        g.save(); g.beginPath(); g.rect(xa, y + 3, xb - xa - 2, 12); g.clip();
        g.fillStyle = "#fff"; g.fillText(`${b.clip}${b.take !== "" ? "#" + b.take : ""}`, xa + 3, y + 9.5); g.restore();
      }
    }
    for (const [xx, yy, d] of marksIn(r, y, from - 8 / pxs, t1, x)) {
      g.strokeStyle = g.fillStyle = CLS_COLOUR[d.cls] || CLS_COLOUR.other;
      g.beginPath();
      if (d.cls === "refused") { g.moveTo(xx - 4, yy - 4); g.lineTo(xx + 4, yy + 4); g.moveTo(xx + 4, yy - 4); g.lineTo(xx - 4, yy + 4); g.lineWidth = 2; g.stroke(); g.lineWidth = 1; }
      else if (d.cls === "cut") { g.moveTo(xx - 4, yy - 4); g.lineTo(xx + 4, yy - 4); g.lineTo(xx, yy + 4); g.fill(); }
      else { g.arc(xx, yy, d.cls === "state" ? 4 : 2.5, 0, 2 * Math.PI); g.fill(); }
      if (d.i === S.selected) { g.strokeStyle = "#fff"; g.strokeRect(xx - 6, yy - 6, 12, 12); }
    }
    g.restore();
  });
  // the present (live) or the sought time (finished run)
  const xn = x(S.now);
  g.strokeStyle = "#f2f2f2"; g.beginPath(); g.moveTo(xn, 12); g.lineTo(xn, h); g.stroke();
  g.restore();
  setText($("span"), `${t0.toFixed(1)}-${t1.toFixed(1)} s, rows ${S.rowTop + 1}-${S.rowTop + rows.length} of ${S.rowOrder.length}`);
  const total = Math.max(S.now, S.duration, S.span);
  const sc = $("scroll"); sc.max = total.toFixed(2);
  if (S.follow) sc.value = S.now.toFixed(2);
}
function marksIn(r, y, ta, tb, x) {  // [x, y, decision] of the row's marks from ta to tb
  const out = [];
  for (let k = lowerBound(r.marks, ta, (d) => d.t); k < r.marks.length && r.marks[k].t <= tb; k++) out.push([x(r.marks[k].t), y + 23, r.marks[k]]);
  return out;
}
function setFollow(on) { S.follow = on; $("follow").className = on ? "on" : ""; markDirty(); }

function timelineEvents() {
  $("follow").onclick = () => setFollow(!S.follow);
  $("zoom-in").onclick = () => { S.span = Math.max(0.5, S.span / 1.5); markDirty(); };
  $("zoom-out").onclick = () => { S.span = Math.min(3600, S.span * 1.5); markDirty(); };
  $("scroll").oninput = (e) => { setFollow(false); S.end = Math.max(S.span, +e.target.value); };
  $("timeline").addEventListener("wheel", (e) => {
    e.preventDefault();
    if (!e.ctrlKey && !e.shiftKey && Math.abs(e.deltaX) < Math.abs(e.deltaY)) {
      S.rowTop = (S.rowTop || 0) + Math.sign(e.deltaY); markDirty(); return;
    }
    if (e.ctrlKey) { S.span = Math.min(3600, Math.max(0.5, S.span * (e.deltaY > 0 ? 1.25 : 0.8))); }
    else {
      const [, t1] = view(); setFollow(false);
      S.end = Math.max(S.span, Math.min(S.now, t1 + ((e.deltaX || e.deltaY) / 400) * S.span));
    }
    markDirty();
  }, { passive: false });
  $("timeline").onclick = (e) => {
    const rect = e.target.getBoundingClientRect(), mx = e.clientX - rect.left, my = e.clientY - rect.top;
    let best = null, bd = 64;
    if (!TL) return;
    const pxs = (TL.w - LABEL_W - 4) / (TL.t1 - TL.t0), x = (t) => LABEL_W + (t - TL.t0) * pxs;
    const hits = TL.rows.flatMap((r, i) => marksIn(r, 16 + i * ROW_H, TL.t0, TL.t1, x));
    for (const [xx, yy, d] of hits) {
      const dd = (xx - mx) ** 2 + (yy - my) ** 2; if (dd < bd) { bd = dd; best = d; }
    }
    if (best) select(best);
  };
}

// -- voices, buses, map ------------------------------------------------------------------------
// meters move by transforms only (no layout): the bar is scaled, the peak tick translated
function meter(peak, rms) {
  const m = el("div", { class: "meter" }), r = el("div", { class: "rms" }), p = el("div", { class: "pk" });
  m.append(r, p); setMeter(m, peak, rms); return m;
}
function td(text, cls) { return el("td", { class: cls || "", text: String(text) }); }
function setText(node, text) { if (node.textContent !== text) node.textContent = text; }
function setMeter(m, peak, rms) {
  const hot = (peak ?? -99) > -1;
  if (m.classList.contains("hot") !== hot) m.classList.toggle("hot", hot);
  const w = `scaleX(${dbFrac(rms ?? peak).toFixed(3)})`, l = `translateX(${(100 * dbFrac(peak) - 100).toFixed(1)}%)`;
  if (m.firstChild.style.transform !== w) m.firstChild.style.transform = w;
  if (m.lastChild.style.transform !== l) m.lastChild.style.transform = l;
}
function voiceCells(v) {
  return [String(v.id), v.speaker, v.clip, v.take, v.bus, null, fmtDb(v.peak_db),
    v.peak_centre_hz !== undefined ? `${v.peak_centre_hz} Hz / ${fmtDb(v.peak_gain_db)} dB` : "",
    v.delay_ms !== undefined ? `${v.delay_ms} ms` : "",
    v.band !== undefined ? `${v.band} / ${fmtDb(v.duck_db)} dB` : "",
    `${v.pos_s.toFixed(2)} / ${v.len_s.toFixed(2)}` + (v.stopped ? " stop" : "")];
}
// a virtualised table: only the rows in view exist (between two spacer rows), reused in place
function spacer(cols) { const tr = el("tr", { class: "pad" }); tr.append(el("td", { colspan: cols })); return tr; }
function setSpacer(tr, px) {
  const h = `${px}px`;
  if (tr.firstChild.style.height !== h) tr.firstChild.style.height = h;
  tr.hidden = px === 0;
}
function inView(box, n) {  // [first, last) of n rows of TR_PX in the scrolled box, a few spare
  const first = Math.max(0, Math.min(n, Math.floor(box.scrollTop / TR_PX) - 2));
  return [first, Math.min(n, first + Math.ceil((box.clientHeight || 400) / TR_PX) + 4)];
}
function tableBody(table, cols) {  // the body with its two spacers (made once)
  const body = table.tBodies[0];
  if (!body.firstChild || body.firstChild.className !== "pad") { body.textContent = ""; body.append(spacer(cols), spacer(cols)); }
  return body;
}
const TEXT_MS = 400;  // the voices' numbers are rewritten ~2.5 times a second, their meters every frame
let lastText = 0;
function drawSnap() {
  // only the voices in view have rows; their cells are updated in place (only changed text is
  // written): little layout work per update whatever the number of voices
  const s = S.snap, body = tableBody($("voices"), 11);
  const now = performance.now(), text = now - lastText >= TEXT_MS;
  if (text) lastText = now;
  setText($("clock"), `t ${s.t.toFixed(3)} s`);
  setText($("voice-count"), `${s.voices_total} playing` + (s.voices_total > s.voices.length ? ` (${s.voices.length} listed)` : ""));
  for (const v of s.voices) rowFor(v.system, v.speaker);
  const [first, last] = inView($("voices-scroll"), s.voices.length);
  const top = body.firstChild, bottom = body.lastChild;
  setSpacer(top, first * TR_PX);
  setSpacer(bottom, (s.voices.length - last) * TR_PX);
  let tr = top.nextSibling;
  for (let j = first; j < last; j++) {
    const v = s.voices[j], cells = voiceCells(v);
    let fresh = false;
    if (tr === bottom) {
      tr = el("tr");
      cells.forEach((c, k) => tr.append(c === null ? el("td", {}, meter(v.peak_db, null)) : td("", [0, 6, 10].includes(k) ? "num" : "")));
      body.insertBefore(tr, bottom);
      fresh = true;
    }
    if (tr.dataset.id !== String(v.id)) { tr.dataset.id = String(v.id); fresh = true; }
    if (text || fresh) cells.forEach((c, k) => { if (c !== null) setText(tr.cells[k], c); });
    setMeter(tr.cells[5].firstChild, v.peak_db, null);
    tr = tr.nextSibling;
  }
  while (tr !== bottom) { const next = tr.nextSibling; tr.remove(); tr = next; }
  const buses = $("buses");
  for (const b of s.buses) {
    let row = buses.querySelector(`[data-bus="${CSS.escape(b.name)}"]`);
    if (!row) {
      row = el("div", { class: "row" + (b.name === "master" ? " master" : ""), "data-bus": b.name },
        el("span", { text: b.name }), meter(b.peak_db, b.rms_db), el("span"));
      buses.append(row);
    }
    setMeter(row.children[1], b.peak_db, b.rms_db);
    setText(row.children[2], `${fmtDb(b.peak_db)} / ${fmtDb(b.rms_db)}`);
  }
  drawMap(s);
  setText($("counts"), `${S.decisions.length} decisions, ${S.nBars + s.voices_total} voices`);
}
function drawMap(s) {
  const c = $("map"), g = c.getContext("2d"), w = c.width, h = c.height, k = Math.min(w, h) / 40;
  g.fillStyle = "#111"; g.fillRect(0, 0, w, h);
  if (!s.listener) return;
  const [lx, , lz, yaw] = s.listener, px = (x) => w / 2 + (x - lx) * k, pz = (z) => h / 2 - (z - lz) * k;
  g.strokeStyle = "#2a2e36"; for (let r = 5; r <= 20; r += 5) { g.beginPath(); g.arc(w / 2, h / 2, r * k, 0, 7); g.stroke(); }
  g.font = "10px ui-monospace, monospace"; g.fillStyle = "#8a93a3";
  for (const [name, [x, , z]] of Object.entries(s.emitters || {})) {
    g.fillRect(px(x) - 2, pz(z) - 2, 4, 4); g.fillText(name, px(x) + 4, pz(z) - 4);
  }
  const a = (yaw * Math.PI) / 180, fx = -Math.sin(a), fz = Math.cos(a);
  g.fillStyle = "#f2f2f2"; g.beginPath();
  g.moveTo(w / 2 + fx * 8, h / 2 - fz * 8); g.lineTo(w / 2 - fz * 5 - fx * 4, h / 2 - fx * 5 + fz * 4);
  g.lineTo(w / 2 + fz * 5 - fx * 4, h / 2 + fx * 5 + fz * 4); g.fill();
  setText($("listener-pose"), `(${lx.toFixed(1)}, ${s.listener[1].toFixed(1)}, ${lz.toFixed(1)}) m, yaw ${yaw.toFixed(0)} deg`);
}
function drawMetrics(m) {
  if (!m || m.callback_p99_us === undefined) return;
  setText($("metrics"), `callback p99 ${m.callback_p99_us} us of ${m.budget_us}  render p99 ${m.render_p99_us} us  ` +
    `underruns ${m.underruns}  misses ${m.deadline_misses}  dropped ${m.events_dropped}` +
    (m.snapshot_hz !== undefined ? `  updates ${m.snapshot_hz} Hz` : ""));
}
function drawPanels() {
  const box = $("panels"); box.textContent = "";
  if (!S.panels.length) box.append(el("pre", { text: "(no panel: the systems of this run publish none)" }));
  for (const p of S.panels) box.append(el("h3", { text: `${p.system}: ${p.title}` }), el("pre", { text: p.rows.join("\n") }));
}

// -- decisions -------------------------------------------------------------------------------
function readFilter() { S.filter = { g: $("f-game").value, sp: $("f-speaker").value.trim(), c: $("f-class").value }; }
function passes(d) {
  const f = S.filter || {};
  return (!f.g || d.game === f.g) && (!f.sp || d.speaker === f.sp) && (!f.c || d.cls === f.c);
}
let drawnShown = 0;
function drawDecisions(full) {
  // S.shown: the decisions passing the filter, oldest first; the table shows the newest on top
  // and has rows only for those in view (a filter change, full, rebuilds the list)
  if (full === true || S.refilter) { readFilter(); S.shown = S.decisions.filter(passes); S.refilter = false; drawnShown = S.shown.length; }
  const box = $("decisions-scroll"), n = S.shown.length, body = tableBody($("decisions"), 5);
  if (n > drawnShown && box.scrollTop > 0) box.scrollTop += (n - drawnShown) * TR_PX;  // rows looked at stay put
  drawnShown = n;
  const [first, last] = inView(box, n);
  const top = body.firstChild, bottom = body.lastChild;
  setSpacer(top, first * TR_PX);
  setSpacer(bottom, (n - last) * TR_PX);
  let tr = top.nextSibling;
  for (let j = first; j < last; j++) {
    const d = S.shown[n - 1 - j];
    if (tr === bottom) { tr = el("tr", {}, td("", "num"), td(""), td(""), td(""), td("")); body.insertBefore(tr, bottom); }
    if (tr.dataset.i !== String(d.i)) {
      tr.dataset.i = String(d.i);
      tr.className = `c-${d.cls}` + (d.i === S.selected ? " sel" : "");
      [d.t.toFixed(3), d.system, d.outcome, d.speaker, d.label].forEach((c, k) => setText(tr.cells[k], c));
    }
    tr = tr.nextSibling;
  }
  while (tr !== bottom) { const next = tr.nextSibling; tr.remove(); tr = next; }
  setText($("decision-count"), `${n} shown of ${S.decisions.length} kept (last ${KEEP})`);
}
function select(d) {
  S.selected = d.i;
  $("detail").textContent = `${d.t.toFixed(4)} s  ${d.system}  ${d.outcome}  (class ${d.cls})\n` + JSON.stringify(d.detail, null, 1);
  if (S.mode === "review") seek(d.t);
  for (const tr of $("decisions").tBodies[0].rows) tr.classList.toggle("sel", +tr.dataset.i === d.i);
  markDirty();
}

// -- actions ---------------------------------------------------------------------------------
function buildActions() {
  const sel = $("action-name"); sel.textContent = "";
  for (const a of S.actions) sel.append(el("option", { value: a.name, text: `/${a.name}` }));
  sel.onchange = buildParams; buildParams();
}
function buildParams() {
  const a = S.actions.find((x) => x.name === $("action-name").value), box = $("action-params");
  box.textContent = ""; if (!a) return;
  $("action-help").textContent = a.help;
  for (const p of a.params) {
    const lab = el("label", {}, `${p.name}${p.required ? "" : "?"}`);
    const n = p.type === "vec3" ? 3 : 1;
    for (let k = 0; k < n; k++) {
      const inp = el("input", { name: p.name, "data-k": k, class: n === 3 ? "vec" : "", title: `${p.name}: ${p.type}` });
      if (p.default !== null && p.default !== undefined) inp.placeholder = String(p.default);
      else if (n === 3) inp.placeholder = "xyz"[k];
      lab.append(inp);
    }
    box.append(lab);
  }
}
function actionEvents() {
  $("action-form").onsubmit = (e) => {
    e.preventDefault();
    const a = S.actions.find((x) => x.name === $("action-name").value); if (!a) return;
    const values = {};
    for (const p of a.params) {
      const inputs = [...$("action-params").querySelectorAll(`input[name="${p.name}"]`)].map((i) => i.value.trim());
      values[p.name] = p.type === "vec3" ? (inputs.some((v) => v !== "") ? inputs : "") : inputs[0];
    }
    send({ type: "action", name: a.name, values });
  };
  for (const b of $("listener").querySelectorAll("button")) {
    b.onclick = () => send({ type: "listener", forward: +(b.dataset.forward || 0), right: +(b.dataset.right || 0), turn: +(b.dataset.turn || 0) });
  }
  for (const id of ["f-game", "f-speaker", "f-class"]) $(id).addEventListener("input", () => drawDecisions(true));
  $("decisions-scroll").addEventListener("scroll", () => drawDecisions(), { passive: true });
  $("voices-scroll").addEventListener("scroll", () => { dirty.snap = true; markDirty(); }, { passive: true });
  $("decisions").onclick = (e) => {  // one handler for every row
    const tr = e.target.closest("tr[data-i]"); if (!tr || !S.decisions.length) return;
    const d = S.decisions[+tr.dataset.i - S.decisions[0].i]; if (d) select(d);
  };
}

// -- finished runs ---------------------------------------------------------------------------
let lastSeek = 0;
function seek(t) {
  S.now = Math.max(0, Math.min(S.duration, t)); $("seek").value = S.now;
  const now = performance.now(); if (now - lastSeek > 60) { lastSeek = now; send({ type: "seek", t: S.now }); }
  markDirty();
}
function reviewEvents() {
  $("seek").oninput = (e) => { S.playing = false; $("play").textContent = "play"; seek(+e.target.value); };
  $("play").onclick = () => {
    S.playing = !S.playing; $("play").textContent = S.playing ? "pause" : "play";
    if (S.playing && S.now >= S.duration) seek(0);
    setFollow(true);
  };
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    if (S.playing) { seek(S.now + (now - last) / 1000); if (S.now >= S.duration) { S.playing = false; $("play").textContent = "play"; } }
    last = now;
  }, 66);
}

let scheduled = false;
const dirty = { snap: false, panels: false, metrics: false, decisions: false };
const FRAME_MS = 100;  // the page draws at most 10 times a second, whatever arrives
const LIST_MS = 250;  // and adds to the decision table at most 4 times a second
let lastFrame = 0, lastList = 0;
function drawFrame(now) {
  if (now - lastFrame < FRAME_MS - 4) { requestAnimationFrame(drawFrame); return; }
  lastFrame = now;
  scheduled = false;
  if (dirty.snap && S.snap) drawSnap();
  if (dirty.panels) drawPanels();
  if (dirty.metrics) drawMetrics(S.metrics);
  if (dirty.decisions && now - lastList >= LIST_MS) { lastList = now; drawDecisions(); dirty.decisions = false; }
  dirty.snap = dirty.panels = dirty.metrics = false;
  drawTimeline();
  if (dirty.decisions) markDirty();
}
function markDirty() {
  if (!scheduled) { scheduled = true; requestAnimationFrame(drawFrame); }
}
window.addEventListener("resize", () => { TL = null; markDirty(); });
timelineEvents(); actionEvents(); reviewEvents(); connect();
